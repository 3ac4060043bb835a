import { redactCredentials } from '@sluice/contracts';
import { Logger } from '@nestjs/common';
import { EventPublisher, NatsEventPublisher } from '@sluice/bus';
import { parseOrExit, stopOnSignals } from '@sluice/cli';
import {
  createWorkerApp,
  MetricsFormat,
  parseWorkerFlags,
  WORKER_USAGE,
  WorkerOptions,
} from '@sluice/sim-worker';

const FORMAT_ROUTES: Record<MetricsFormat, string> = {
  none: '',
  vllm: 'vllm format at GET /metrics',
  sglang: 'sglang format at GET /v1/loads, /server_info, /metrics',
};

function describe(options: WorkerOptions, url: string, workerId: string): string {
  const capacity =
    `dp ${options.dpSize} x ${options.kvTotalBlocks} KV blocks of ${options.blockSize} tokens, ` +
    `max ${options.maxNumBatchedTokens} batched tokens, max ${options.maxNumSeqs} seqs`;
  const reports = options.natsUrl
    ? `reports on ${redactCredentials(options.natsUrl)} namespace ${options.namespace}`
    : 'no NATS load reports (no --nats-url)';
  const load = options.metricsFormat === 'none' ? '' : `; ${FORMAT_ROUTES[options.metricsFormat]}`;
  return `worker ${workerId} serving ${options.model} at ${url} (${capacity}, speedup ${options.speedup}; ${reports}${load})`;
}

async function main(): Promise<void> {
  const options = parseOrExit({ prefix: 'error', usage: WORKER_USAGE, parse: parseWorkerFlags });
  // Nest's per-route startup lines would drown the one line this process logs.
  Logger.overrideLogger(['error', 'warn']);
  const publisher: EventPublisher | null = options.natsUrl
    ? await NatsEventPublisher.connect(options.natsUrl, options.workerId)
    : null;
  const worker = await createWorkerApp(options, publisher);
  process.stdout.write(`${describe(options, worker.url, worker.workerId)}\n`);

  stopOnSignals(async () => {
    // close() publishes worker_down; draining the publisher makes sure it leaves the process.
    await worker.close();
    await publisher?.close();
  });
}

main().catch((err: unknown) => {
  process.stderr.write(
    `worker failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
