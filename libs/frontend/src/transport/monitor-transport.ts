import { CustomTransportStrategy } from '@nestjs/microservices';
import {
  EventPublisher,
  InProcessBus,
  InProcessEventPublisher,
  InProcessTransport,
  NamespacedNatsServer,
  natsConnectionOptions,
  ServerEventPublisher,
} from '@sluice/bus';
import { FrontendConfig } from '../config/frontend-config';

/**
 * The bus the worker monitor listens on, NATS (`--nats-url`) or the embedded in-process bus,
 * and the publisher that sends on that same bus. Made once per process: the monitor's
 * microservice is hosted on `server`, and whoever publishes (threshold changes, the in-process
 * engine bridge) injects `EventPublisher`.
 */
export class MonitorTransport {
  private constructor(
    readonly server: CustomTransportStrategy,
    /** Set on NATS: the connection's state, which the monitor follows (`BusStateService`). */
    readonly nats: NamespacedNatsServer | null,
    readonly publisher: EventPublisher,
  ) {}

  static create(config: FrontendConfig, embeddedBus: InProcessBus | undefined): MonitorTransport {
    if (config.natsUrl) {
      const server = new NamespacedNatsServer(
        {
          ...natsConnectionOptions(config.natsUrl, 'sluice-frontend'),
          ...stalenessPings(config.workerTtlMs),
        },
        config.namespace,
      );
      return new MonitorTransport(server, server, new ServerEventPublisher(server));
    }
    if (!embeddedBus) throw new Error('no --nats-url and no embedded bus: nothing to monitor');
    return new MonitorTransport(
      new InProcessTransport(embeddedBus, config.namespace),
      null,
      new InProcessEventPublisher(embeddedBus),
    );
  }
}

/**
 * A NATS server that hangs, or a partition that drops packets without a reset, leaves the socket
 * open: with the client's default pings (every 2 min) the frontend would call itself connected,
 * hear nothing, and expire every worker after `--worker-ttl-ms`. Pinging every TTL/5 with two
 * pongs outstanding notices a dead connection within 3/5 of the TTL, so expiry pauses first.
 */
export function stalenessPings(workerTtlMs: number): { pingInterval: number; maxPingOut: number } {
  return {
    pingInterval: Math.min(120_000, Math.max(100, Math.floor(workerTtlMs / 5))),
    maxPingOut: 2,
  };
}
