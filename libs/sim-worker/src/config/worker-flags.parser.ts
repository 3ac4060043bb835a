import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  flagErrorAs,
  formatUsage,
  integerIn,
  InvalidFlagValue,
  natsUrl,
  numberIn,
  oneOf,
  parseFlags,
  switchFlag,
  valueFlag,
} from '@sluice/cli';
import { DEFAULT_NAMESPACE, REPORT_LIMITS } from '@sluice/contracts';
import { WorkerConfigError } from './worker-config.error';
import { METRICS_FORMATS, WorkerOptions } from './worker-options';

const int = (arg: string, help: string, fallback: number, min: number, max?: number) =>
  valueFlag({ arg, help, parse: integerIn(min, max), default: fallback });

/** The worker's flags; unlike the frontend's, they are not read from the environment. */
export const WORKER_FLAGS = {
  model: valueFlag({
    arg: 'M',
    help: 'model name served and reported',
    parse: text(REPORT_LIMITS.maxModelLength),
    default: 'Qwen/Qwen3-0.6B',
  }),
  'kv-total-blocks': int('N', 'KV cache of each rank, in blocks', 16384, 1),
  'block-size': int('N', 'tokens per KV block', 16, 1),
  'max-num-batched-tokens': int('N', 'tokens per engine step', 8192, 1),
  'max-num-seqs': int('N', 'sequences running at once per rank', 256, 1),
  'dp-size': int('N', 'data-parallel ranks', 1, 1, REPORT_LIMITS.maxDpSize),
  speedup: valueFlag({
    arg: 'F',
    help: 'divides every simulated delay; 0: no delay (PUT /sim/speedup changes it at runtime)',
    parse: numberIn({ min: 0 }),
    default: 1,
  }),
  host: valueFlag({ arg: 'H', help: 'listen address', parse: text(255), default: '127.0.0.1' }),
  port: int('N', 'listen port; 0: any free port', 9001, 0, 65535),
  'nats-url': valueFlag({
    arg: 'URL',
    help: 'publish load reports here; unset: none',
    parse: natsUrl,
    default: undefined,
  }),
  namespace: valueFlag({
    arg: 'NS',
    help: 'NATS subject namespace',
    parse: subjectToken,
    default: DEFAULT_NAMESPACE,
  }),
  'worker-id': valueFlag({
    arg: 'ID',
    help: 'id in reports (default sim-<host>-<pid>-<random>)',
    parse: identifier,
    default: undefined,
  }),
  'advertise-url': valueFlag({
    arg: 'URL',
    help: 'base URL put in reports (default http://<host>:<port>)',
    parse: httpUrl,
    default: undefined,
  }),
  'report-interval-ms': int('MS', 'time between load reports', 1000, 1),
  'metrics-format': valueFlag({
    arg: METRICS_FORMATS.join('|'),
    help: "also serve the live load in an engine's format",
    parse: oneOf(METRICS_FORMATS),
    default: 'none' as const,
  }),
  'honour-name-filter': switchFlag({
    help:
      'with --metrics-format vllm, answer /metrics?name[]=... with only the named samples, as ' +
      "prometheus_client's own exporter does (vLLM before the 0.8 series); default: the whole " +
      "exposition whatever the query, as vLLM's API server sends it",
    default: false,
  }),
};

export const WORKER_USAGE = formatUsage(WORKER_FLAGS, {
  synopsis: 'usage: node dist/apps/worker/main.js [flags]',
});

/** Parses the worker's command line; throws `WorkerConfigError` naming any bad flag. */
export function parseWorkerFlags(argv: string[]): WorkerOptions {
  const { values: v } = parseFlags(
    WORKER_FLAGS,
    argv,
    {},
    {
      error: flagErrorAs(WorkerConfigError),
    },
  );
  return {
    model: v.model,
    kvTotalBlocks: v['kv-total-blocks'],
    blockSize: v['block-size'],
    maxNumBatchedTokens: v['max-num-batched-tokens'],
    maxNumSeqs: v['max-num-seqs'],
    dpSize: v['dp-size'],
    speedup: v.speedup,
    host: v.host,
    port: v.port,
    natsUrl: v['nats-url'],
    namespace: v.namespace,
    workerId: v['worker-id'] ?? defaultWorkerId(),
    advertiseUrl: v['advertise-url'],
    reportIntervalMs: v['report-interval-ms'],
    metricsFormat: v['metrics-format'],
    honourNameFilter: v['honour-name-filter'],
  };
}

function defaultWorkerId(): string {
  return `sim-${hostname()}-${process.pid}-${randomBytes(2).toString('hex')}`;
}

function text(maxLength: number): (raw: string) => string {
  return (raw) => {
    if (raw.trim() === '' || raw.length > maxLength) {
      throw new InvalidFlagValue(`expected a non-empty string of at most ${maxLength} characters`);
    }
    return raw;
  };
}

/** The namespace becomes one token of a NATS subject, so it cannot hold dots or wildcards. */
function subjectToken(raw: string): string {
  const value = text(64)(raw);
  if (!/^[^\s.*>]+$/.test(value)) {
    throw new InvalidFlagValue("expected no whitespace, '.', '*' or '>'");
  }
  return value;
}

/** Worker ids show up in logs and metric labels, where whitespace only causes confusion. */
function identifier(raw: string): string {
  const value = text(REPORT_LIMITS.maxIdLength)(raw);
  if (/\s/.test(value)) throw new InvalidFlagValue('expected no whitespace');
  return value;
}

function httpUrl(raw: string): string {
  if (!/^https?:\/\//.test(raw) || !URL.canParse(raw)) {
    throw new InvalidFlagValue('expected an http:// or https:// URL');
  }
  return raw.replace(/\/+$/, '');
}
