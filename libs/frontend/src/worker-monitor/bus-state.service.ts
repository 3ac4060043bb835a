import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Gauge } from 'prom-client';
import { Observable, Subscription } from 'rxjs';
import { METRIC } from '../metrics/metric-names';
import { MonitorTransport } from '../transport/monitor-transport';
import { WorkerRegistry } from './worker-registry.service';

export type BusState = 'connected' | 'disconnected' | 'embedded';

/**
 * Follows the monitor transport's connection. While NATS is down the registry stops expiring
 * workers: their silence is ours, not theirs, and admission keeps the last known load.
 */
@Injectable()
export class BusStateService implements OnModuleInit {
  private readonly logger = new Logger('WorkerMonitor');
  private current: BusState = 'disconnected';
  private subscription: Subscription | undefined;

  constructor(
    private readonly registry: WorkerRegistry,
    @InjectMetric(METRIC.busConnected) private readonly connected: Gauge,
    private readonly transport: MonitorTransport,
  ) {
    this.connected.set(0);
  }

  onModuleInit(): void {
    if (this.transport.nats) this.attach(this.transport.nats);
    else this.attachEmbedded();
  }

  get state(): BusState {
    return this.current;
  }

  attachEmbedded(): void {
    this.current = 'embedded';
    this.connected.set(1);
  }

  attach(server: { status: Observable<string> }): void {
    this.subscription?.unsubscribe();
    this.subscription = server.status.subscribe((status) => {
      const next: BusState = status === 'connected' ? 'connected' : 'disconnected';
      if (next === this.current) return;
      this.current = next;
      this.connected.set(next === 'connected' ? 1 : 0);
      this.registry.setExpiryPaused(next !== 'connected', Date.now());
      if (next === 'connected') this.logger.log('NATS connected: acting on load reports');
      else this.logger.warn(`NATS ${status}: keeping the last known load, worker expiry paused`);
    });
  }
}
