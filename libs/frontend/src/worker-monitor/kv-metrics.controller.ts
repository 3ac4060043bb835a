import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { KV_METRICS_EVENT, WORKER_DOWN_EVENT } from '@sluice/contracts';
import { MonitorService } from './monitor.service';

/** NATS (or in-process bus) handlers of docs/api.md#nats-subjects; the namespace is added by the transport. */
@Controller()
export class KvMetricsController {
  constructor(private readonly monitor: MonitorService) {}

  @EventPattern(KV_METRICS_EVENT)
  onKvMetrics(@Payload() payload: unknown): void {
    this.monitor.onKvMetrics(payload);
  }

  @EventPattern(WORKER_DOWN_EVENT)
  onWorkerDown(@Payload() payload: unknown): void {
    this.monitor.onWorkerDown(payload);
  }
}
