import { INestApplication } from '@nestjs/common';
import {
  InProcessBus,
  InProcessEventPublisher,
  InProcessTransport,
  NamespacedNatsServer,
} from '@sluice/bus';
import type { NatsConnection } from 'nats';
import { FrontendConfig } from '../config/frontend-config';
import { BusStateService } from './bus-state.service';

export type Publish = (subject: string, payload: object) => void;

/**
 * Hosts the worker monitor as a Nest microservice on NATS (`--nats-url`) or the in-process
 * bus. Returns how to publish on that same bus, usable once the microservice has started.
 */
export function connectMonitor(
  app: INestApplication,
  config: FrontendConfig,
  embeddedBus: InProcessBus | undefined,
): () => Publish {
  const busState = app.get(BusStateService);
  if (config.natsUrl) {
    const server = new NamespacedNatsServer(
      {
        servers: config.natsUrl,
        name: 'sluice-frontend',
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        waitOnFirstConnect: true,
      },
      config.namespace,
    );
    busState.attach(server);
    app.connectMicroservice({ strategy: server }, { inheritAppConfig: true });
    return () => {
      const nc = server.unwrap<NatsConnection>();
      return (subject, payload) => {
        if (!nc.isClosed()) nc.publish(subject, JSON.stringify(payload));
      };
    };
  }
  if (!embeddedBus) throw new Error('no --nats-url and no embedded bus: nothing to monitor');
  busState.attachEmbedded();
  app.connectMicroservice(
    { strategy: new InProcessTransport(embeddedBus, config.namespace) },
    { inheritAppConfig: true },
  );
  const publisher = new InProcessEventPublisher(embeddedBus);
  return () => (subject, payload) => publisher.publish(subject, payload);
}
