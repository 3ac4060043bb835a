import {
  EventPublisher,
  InProcessBus,
  InProcessEventPublisher,
  NatsEventPublisher,
} from '@sluice/bus';
import { parseOrExit } from '@sluice/cli';
import {
  createFrontendApp,
  FRONTEND_USAGE,
  FrontendConfig,
  parseFrontendFlags,
} from '@sluice/frontend';
import { createWorkerApp, parseWorkerFlags, WorkerApp } from '@sluice/sim-worker';
import { EMBEDDED_ENV } from './embedded-env';

/**
 * `npm start`: the whole system in one process on embedded defaults — the frontend on :8000 and
 * simulated workers serving Qwen/Qwen3-0.6B, talking over the in-process bus (or NATS when
 * `--nats-url` is given). Flags go to the frontend; the workers are shaped by
 * SLUICE_EMBEDDED_WORKERS (count, default 2, or 0 with --engine-target) and
 * SLUICE_EMBEDDED_WORKER_FLAGS (extra worker flags).
 */
const MODEL = 'Qwen/Qwen3-0.6B';

/** Two simulated workers by default; none when real engines are given with --engine-target. */
function workerCount(config: FrontendConfig): number {
  const { name } = EMBEDDED_ENV.workers;
  const raw = process.env[name] || (config.engineTargets.length > 0 ? '0' : '2');
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 64) {
    process.stderr.write(`sluice: invalid value '${raw}' for ${name}: expected 0..64\n`);
    process.exit(2);
  }
  return n;
}

async function publisherFor(
  config: FrontendConfig,
  bus: InProcessBus | undefined,
  id: string,
): Promise<EventPublisher> {
  return bus
    ? new InProcessEventPublisher(bus)
    : NatsEventPublisher.connect(config.natsUrl as string, id);
}

async function main(): Promise<void> {
  // The one-command start keeps loopback writes (`--no-admin-allow-loopback` turns them off).
  const config = parseOrExit(
    { prefix: 'sluice', usage: FRONTEND_USAGE, parse: parseFrontendFlags },
    ['--admin-allow-loopback', ...process.argv.slice(2)],
  );
  const count = workerCount(config);
  const extra = (process.env[EMBEDDED_ENV.workerFlags.name] ?? '').split(/\s+/).filter(Boolean);
  const bus = config.natsUrl ? undefined : new InProcessBus();
  const frontend = await createFrontendApp(config, { embeddedBus: bus, shutdownHooks: false });
  const workers: WorkerApp[] = [];
  for (let i = 1; i <= count; i++) {
    const id = `embedded-worker-${i}`;
    let options;
    try {
      options = parseWorkerFlags([
        '--model',
        MODEL,
        '--port',
        '0',
        '--worker-id',
        id,
        '--namespace',
        config.namespace,
        ...extra,
      ]);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      process.stderr.write(`sluice: ${EMBEDDED_ENV.workerFlags.name}: ${reason}\n`);
      process.exit(2);
    }
    workers.push(await createWorkerApp(options, await publisherFor(config, bus, id)));
  }
  const engines = config.engineTargets.map((t) => `${t.engine} ${t.spec}`);
  const behind = [
    ...(count > 0 ? [`${count} simulated workers (${workers.map((w) => w.url).join(', ')})`] : []),
    ...(engines.length > 0 ? [`engines scraped in-process: ${engines.join(', ')}`] : []),
  ];
  process.stdout.write(
    `sluice: ready at ${frontend.url} with ${behind.length > 0 ? behind.join('; ') : 'no workers (SLUICE_EMBEDDED_WORKERS=0)'}\n`,
  );
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`sluice: ${signal} received, shutting down\n`);
    void Promise.allSettled(workers.map((w) => w.close()))
      .then(() => frontend.close())
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(
    `sluice: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`,
  );
  process.exit(1);
});
