import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  InProcessBus,
  InProcessEventPublisher,
  InProcessTransport,
  NamespacedNatsServer,
} from '@sluice/bus';
import type { NatsConnection } from 'nats';
import { ThresholdSyncService } from './thresholds/threshold-sync.service';
import { FrontendConfig } from './config/frontend-config';
import { FrontendModule } from './frontend.module';
import { BusStateService } from './ops/bus-state.service';
import { setupOpenApi } from './ops/openapi';
import { describeAdmission } from './thresholds/describe-admission';

export interface FrontendHandle {
  readonly app: NestFastifyApplication;
  /** Base URL the frontend listens on, e.g. http://127.0.0.1:8000. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Builds and starts the frontend: HTTP on Fastify plus the worker monitor as a Nest
 * microservice in the same process, on NATS or (without `--nats-url`) the in-process bus.
 */
export async function createFrontendApp(
  config: FrontendConfig,
  options: { embeddedBus?: InProcessBus; shutdownHooks?: boolean } = {},
): Promise<FrontendHandle> {
  const { embeddedBus, shutdownHooks = true } = options;
  const adapter = new FastifyAdapter({ bodyLimit: config.bodyLimitBytes });
  const app = await NestFactory.create<NestFastifyApplication>(
    FrontendModule.forRoot(config),
    adapter,
  );
  if (shutdownHooks) app.enableShutdownHooks();
  const busState = app.get(BusStateService);
  let natsServer: NamespacedNatsServer | undefined;
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
    natsServer = server;
    app.connectMicroservice({ strategy: server }, { inheritAppConfig: true });
  } else {
    if (!embeddedBus) throw new Error('no --nats-url and no embedded bus: nothing to monitor');
    busState.attachEmbedded();
    app.connectMicroservice(
      { strategy: new InProcessTransport(embeddedBus, config.namespace) },
      { inheritAppConfig: true },
    );
  }
  setupOpenApi(app);
  // Thresholds are loaded (retrying while the database is away) before anything is served.
  await app.init();
  await app.startAllMicroservices();
  const sync = app.get(ThresholdSyncService);
  if (natsServer) {
    const nc = natsServer.unwrap<NatsConnection>();
    sync.setPublisher((subject, payload) => nc.publish(subject, JSON.stringify(payload)));
  } else if (embeddedBus) {
    const publisher = new InProcessEventPublisher(embeddedBus);
    sync.setPublisher((subject, payload) => publisher.publish(subject, payload));
  }
  await app.listen(config.httpPort, config.httpHost);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.httpPort;
  const host = config.httpHost === '0.0.0.0' ? '127.0.0.1' : config.httpHost;
  const url = `http://${host}:${port}`;
  const logger = new Logger('Sluice');
  logger.log(`frontend listening on ${url} (bus: ${config.natsUrl ?? 'embedded in-process'})`);
  logger.log(describeAdmission(config));
  return { app, url, close: () => app.close() };
}
