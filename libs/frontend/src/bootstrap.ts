import { Logger as NestLogger, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { InProcessBus } from '@sluice/bus';
import { getToken } from '@willsoto/nestjs-prometheus';
import type { Counter } from 'prom-client';
import { redactCredentials } from '@sluice/contracts';
import { installAdmission } from './admission/early-refusal.hook';
import { AdmissionPolicy } from './admission/admission-policy';
import { FrontendConfig } from './config/frontend-config';
import { InProcessBridge } from './engine-bridge/in-process-bridge.service';
import { FrontendModule } from './frontend.module';
import { drainAndClose, installSignalHandlers } from './health/graceful-shutdown';
import { capConnections, defaultMaxConnections } from './http/connection-cap';
import { answerFrameworkError } from './http/http-hardening';
import { installHttp } from './http/install-http';
import { PinoLoggerService, requestIdFor } from './http/logging';
import { METRIC } from './metrics/metric-names';
import { describePriority } from './priority/describe-priority';
import { describeAdmission } from './thresholds/describe-admission';
import { ThresholdSyncService } from './thresholds/threshold-sync.service';
import { connectMonitor } from './transport/connect-monitor';

const REQUEST_TIMEOUT_MS = 30_000;

export interface FrontendHandle {
  readonly app: NestFastifyApplication;
  /** Base URL the frontend listens on, e.g. http://127.0.0.1:8000. */
  readonly url: string;
  /** Drains in-flight requests (up to --shutdown-timeout-ms), then closes. */
  close(): Promise<void>;
}

export interface FrontendOptions {
  /** The in-process bus of the embedded system (used when there is no --nats-url). */
  embeddedBus?: InProcessBus;
  /** Handle SIGTERM/SIGINT with a drain (default true; the embedded launcher does its own). */
  shutdownHooks?: boolean;
  /** Your own admission policies, run after the built-in busy check (README: custom guards). */
  policies?: Type<AdmissionPolicy>[];
}

/**
 * Builds and starts the frontend: HTTP on Fastify plus the worker monitor as a Nest
 * microservice in the same process, on NATS or (without `--nats-url`) the in-process bus.
 */
export async function createFrontendApp(
  config: FrontendConfig,
  options: FrontendOptions = {},
): Promise<FrontendHandle> {
  const adapter = new FastifyAdapter({
    bodyLimit: config.bodyLimitBytes,
    genReqId: requestIdFor,
    requestIdHeader: false,
    // A client gets this long to send its whole request (not to receive the answer, which may
    // stream for minutes): a connection trickling its body cannot hold a socket forever.
    requestTimeout: REQUEST_TIMEOUT_MS,
    ...connectionTimeouts(config.idleTimeoutMs),
    frameworkErrors: answerFrameworkError,
  });
  const logger = PinoLoggerService.create(config.logLevel);
  const app = await NestFactory.create<NestFastifyApplication>(
    FrontendModule.forRoot(config, options.policies ?? [], options.embeddedBus),
    adapter,
    // The JSON parser is Sluice's own (`http-hardening.ts`), and no other body type is read.
    { logger, bodyParser: false },
  );
  installAdmission(app, installHttp(app, config, logger));
  connectMonitor(app);
  // Thresholds are loaded (retrying while the database is away) before anything is served.
  await app.init();
  const log = new NestLogger('Sluice');
  const bus = config.natsUrl ? redactCredentials(config.natsUrl) : 'embedded in-process';
  // NATS unreachable at boot must not keep the frontend from listening: /live answers, /health
  // reports the bus down, and the monitor connects (retrying forever) in the background.
  const monitorStarted = startMonitor(app, log, bus);
  if (!config.natsUrl) await monitorStarted;
  await app.get(InProcessBridge).start();
  const maxConnections = config.maxConnections ?? defaultMaxConnections();
  capConnections(
    app.getHttpServer(),
    maxConnections,
    app.get<Counter>(getToken(METRIC.connectionsRefused)),
  );
  await app.listen(config.httpPort, config.httpHost);
  if (options.shutdownHooks ?? true) installSignalHandlers(app, config.shutdownTimeoutMs);
  const url = listeningUrl(app, config);
  // The app runs on whatever Node starts it (only npm scripts insist on the one of record).
  log.log(`frontend listening on ${url} (bus: ${bus}; Node ${process.version})`);
  log.log(describeAdmission(config));
  log.log(`at most ${maxConnections} open client connections (--max-connections)`);
  log.log(describePriority(config));
  log.log(
    config.adminTokens.length > 0
      ? `threshold changes need a bearer token (admins: ${config.adminTokens.map((t) => t.name).join(', ')})`
      : config.adminAllowLoopback
        ? 'no --admin-token configured: threshold changes are accepted from loopback clients only'
        : 'no --admin-token configured: threshold changes are refused (--admin-allow-loopback accepts loopback clients)',
  );
  return { app, url, close: () => drainAndClose(app, config.shutdownTimeoutMs) };
}

/**
 * `--idle-timeout-ms` (docs/security.md#limits-and-hardening) on Node's own timers, which never touch an answer in
 * progress: a connection idle between requests is closed after `keepAliveTimeout`; one that
 * has not sent whole request headers in time (nothing at all since it connected, or headers
 * trickled byte by byte) is closed after `headersTimeout`, which Node must not set above
 * `requestTimeout`. Node checks those two on a timer (30 s by default): check often enough that
 * a short timeout holds.
 */
function connectionTimeouts(idleTimeoutMs: number): {
  keepAliveTimeout: number;
  http: { headersTimeout: number; connectionsCheckingInterval: number };
} {
  const headersTimeout = Math.min(idleTimeoutMs, REQUEST_TIMEOUT_MS);
  return {
    keepAliveTimeout: idleTimeoutMs,
    http: {
      headersTimeout,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 4))),
    },
  };
}

/** Resolves once the monitor has its first connection; a failure is logged, never thrown. */
async function startMonitor(
  app: NestFastifyApplication,
  log: NestLogger,
  bus: string,
): Promise<void> {
  let connected = false;
  const waiting = setTimeout(() => {
    if (!connected)
      log.warn(`still waiting for the bus at ${bus}; serving on no load reports meanwhile`);
  }, 2000);
  waiting.unref();
  try {
    await app.startAllMicroservices();
    connected = true;
    // A change another replica announced between the load at start and the subscription was
    // not heard (a revert of an expired temporary change is often just then): read again now.
    await app.get(ThresholdSyncService).resyncAll();
  } catch (err) {
    log.error(
      `worker monitor could not start on ${bus}: ${err instanceof Error ? err.message : String(err)}`,
    );
  } finally {
    clearTimeout(waiting);
  }
}

function listeningUrl(app: NestFastifyApplication, config: FrontendConfig): string {
  const address: unknown = app.getHttpServer().address();
  const port =
    typeof address === 'object' && address !== null
      ? (address as { port: number }).port
      : config.httpPort;
  const host = config.httpHost === '0.0.0.0' ? '127.0.0.1' : config.httpHost;
  return `http://${host}:${port}`;
}
