import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { EventPublisher } from '@sluice/bus';
import { WorkerOptions } from './config/worker-options';
import { DisabledEventPublisher } from './reporting/disabled-event.publisher';
import { WorkerLifecycle } from './worker-lifecycle.service';
import { WorkerModule } from './worker.module';

/** Long prompts (and batched embedding inputs) exceed Fastify's 1 MiB default. */
const BODY_LIMIT_BYTES = 32 * 1024 * 1024;

export interface WorkerApp {
  readonly app: NestFastifyApplication;
  /** The base URL the server actually listens on (resolved ephemeral port). */
  readonly url: string;
  readonly workerId: string;
  /** Publishes worker_down, aborts in-flight requests, closes the server; idempotent. */
  close(): Promise<void>;
}

/**
 * Starts one simulated worker listening on `options.host`:`options.port`. With a publisher it
 * reports its load from now on; with null it only serves HTTP.
 */
export async function createWorkerApp(
  options: WorkerOptions,
  publisher: EventPublisher | null,
): Promise<WorkerApp> {
  const app = await NestFactory.create<NestFastifyApplication>(
    WorkerModule.register(options, publisher ?? new DisabledEventPublisher()),
    // On close every request has already been aborted (see WorkerLifecycle); without forcing,
    // an idle keep-alive socket a client opened but never used would hold the close for seconds.
    new FastifyAdapter({ bodyLimit: BODY_LIMIT_BYTES, forceCloseConnections: true }),
    // A library must not abort the host process (the embedded mode runs several apps).
    { abortOnError: false },
  );
  try {
    await app.listen(options.port, options.host);
  } catch (err) {
    await app.close();
    throw err;
  }
  const url = listeningUrl(app, options.host);
  app.get(WorkerLifecycle).start(options.advertiseUrl ?? url);
  let closing: Promise<void> | undefined;
  return { app, url, workerId: options.workerId, close: () => (closing ??= app.close()) };
}

function listeningUrl(app: NestFastifyApplication, host: string): string {
  const address = app.getHttpAdapter().getInstance().server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  // A wildcard address is not something a client can connect to; loopback always works.
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}
