import { INestApplication } from '@nestjs/common';
import {
  InProcessBus,
  InProcessEventPublisher,
  InProcessTransport,
  NamespacedNatsServer,
  type Publish,
} from '@sluice/bus';
import type { NatsConnection } from 'nats';
import { natsServerOptions } from '@sluice/contracts';
import { FrontendConfig } from '../config/frontend-config';
import { BusStateService } from './bus-state.service';

/**
 * Hosts the worker monitor as a Nest microservice on NATS (`--nats-url`) or the in-process
 * bus. Returns how to publish on that same bus; on NATS a message published before the first
 * connection (or after the last) is dropped: publishing is best effort, peers also resync.
 */
export function connectMonitor(
  app: INestApplication,
  config: FrontendConfig,
  embeddedBus: InProcessBus | undefined,
): Publish {
  const busState = app.get(BusStateService);
  if (config.natsUrl) {
    const server = new NamespacedNatsServer(
      {
        ...natsServerOptions(config.natsUrl),
        name: 'sluice-frontend',
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        waitOnFirstConnect: true,
        ...stalenessPings(config.workerTtlMs),
      },
      config.namespace,
    );
    busState.attach(server);
    app.connectMicroservice({ strategy: server }, { inheritAppConfig: true });
    return (subject, payload) => {
      const nc = connectionOf(server);
      if (nc && !nc.isClosed()) nc.publish(subject, JSON.stringify(payload));
    };
  }
  if (!embeddedBus) throw new Error('no --nats-url and no embedded bus: nothing to monitor');
  busState.attachEmbedded();
  app.connectMicroservice(
    { strategy: new InProcessTransport(embeddedBus, config.namespace) },
    { inheritAppConfig: true },
  );
  const publisher = new InProcessEventPublisher(embeddedBus);
  return (subject, payload) => publisher.publish(subject, payload);
}

/** The server's NATS connection, or undefined until its first connection is made. */
function connectionOf(server: NamespacedNatsServer): NatsConnection | undefined {
  try {
    return server.unwrap<NatsConnection>();
  } catch {
    return undefined;
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
