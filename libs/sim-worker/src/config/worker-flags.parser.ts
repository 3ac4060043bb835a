import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_NAMESPACE, REPORT_LIMITS } from '@sluice/contracts';
import { WorkerConfigError } from './worker-config.error';
import { METRICS_FORMATS, WorkerOptions } from './worker-options';

export const WORKER_USAGE =
  'usage: node dist/apps/worker/main.js [--model M] [--kv-total-blocks N] [--block-size N] ' +
  '[--max-num-batched-tokens N] [--max-num-seqs N] [--dp-size N] [--speedup F] [--host H] ' +
  '[--port N] [--nats-url URL] [--namespace NS] [--worker-id ID] [--advertise-url URL] ' +
  '[--report-interval-ms N] [--metrics-format none|vllm|sglang]';

// Every flag is read as a string so that each value is validated here, with a message that
// names the flag, rather than coerced by parseArgs.
const FLAGS = {
  model: { type: 'string' },
  'kv-total-blocks': { type: 'string' },
  'block-size': { type: 'string' },
  'max-num-batched-tokens': { type: 'string' },
  'max-num-seqs': { type: 'string' },
  'dp-size': { type: 'string' },
  speedup: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'nats-url': { type: 'string' },
  namespace: { type: 'string' },
  'worker-id': { type: 'string' },
  'advertise-url': { type: 'string' },
  'report-interval-ms': { type: 'string' },
  'metrics-format': { type: 'string' },
} as const;

type Flags = Partial<Record<keyof typeof FLAGS, string>>;

/** Parses the worker's command line; throws `WorkerConfigError` naming any bad flag. */
export function parseWorkerFlags(argv: string[]): WorkerOptions {
  const flags = readFlags(argv);
  return {
    model: text(flags, 'model', 'Qwen/Qwen3-0.6B', REPORT_LIMITS.maxModelLength),
    kvTotalBlocks: integer(flags, 'kv-total-blocks', 16384, 1),
    blockSize: integer(flags, 'block-size', 16, 1),
    maxNumBatchedTokens: integer(flags, 'max-num-batched-tokens', 8192, 1),
    maxNumSeqs: integer(flags, 'max-num-seqs', 256, 1),
    dpSize: integer(flags, 'dp-size', 1, 1, REPORT_LIMITS.maxDpSize),
    speedup: nonNegativeNumber(flags, 'speedup', 1),
    host: text(flags, 'host', '127.0.0.1', 255),
    port: integer(flags, 'port', 9001, 0, 65535),
    natsUrl: flags['nats-url'] === undefined ? undefined : text(flags, 'nats-url', '', 2048),
    namespace: subjectToken(flags, 'namespace', DEFAULT_NAMESPACE),
    workerId: identifier(flags, 'worker-id'),
    advertiseUrl: httpUrl(flags, 'advertise-url'),
    reportIntervalMs: integer(flags, 'report-interval-ms', 1000, 1),
    metricsFormat: oneOf(flags, 'metrics-format', METRICS_FORMATS, 'none'),
  };
}

function readFlags(argv: string[]): Flags {
  try {
    const args = attachNegativeNumbers(argv);
    return parseArgs({ args, options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (err) {
    // parseArgs already names the offending flag ("Unknown option '--x'").
    throw new WorkerConfigError(err instanceof Error ? err.message : String(err));
  }
}

/**
 * parseArgs takes `--speedup -1` for two options and reports an "ambiguous" argument; joining
 * them makes the value reach validation, whose message says what is wrong with it.
 */
function attachNegativeNumbers(argv: string[]): string[] {
  const args: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const next = argv[i + 1];
    if (/^--[a-z-]+$/.test(argv[i]) && next !== undefined && /^-\d/.test(next)) {
      args.push(`${argv[i]}=${next}`);
      i += 1;
    } else {
      args.push(argv[i]);
    }
  }
  return args;
}

function defaultWorkerId(): string {
  return `sim-${hostname()}-${process.pid}-${randomBytes(2).toString('hex')}`;
}

function invalid(flag: string, value: string, expected: string): WorkerConfigError {
  return new WorkerConfigError(`invalid value '${value}' for --${flag}: expected ${expected}`);
}

function integer(
  flags: Flags,
  flag: keyof Flags,
  fallback: number,
  min: number,
  max?: number,
): number {
  const raw = flags[flag];
  if (raw === undefined) return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  const limit = max ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isSafeInteger(value) || value < min || value > limit) {
    const range = max === undefined ? `>= ${min}` : `in [${min}, ${max}]`;
    throw invalid(flag, raw, `an integer ${range}`);
  }
  return value;
}

function nonNegativeNumber(flags: Flags, flag: keyof Flags, fallback: number): number {
  const raw = flags[flag];
  if (raw === undefined) return fallback;
  const value = raw.trim() === '' ? NaN : Number(raw);
  if (!Number.isFinite(value) || value < 0) throw invalid(flag, raw, 'a finite number >= 0');
  return value;
}

function text(flags: Flags, flag: keyof Flags, fallback: string, maxLength: number): string {
  const raw = flags[flag];
  if (raw === undefined) return fallback;
  if (raw.trim() === '' || raw.length > maxLength) {
    throw invalid(flag, raw, `a non-empty string of at most ${maxLength} characters`);
  }
  return raw;
}

/** The namespace becomes one token of a NATS subject, so it cannot hold dots or wildcards. */
function subjectToken(flags: Flags, flag: keyof Flags, fallback: string): string {
  const value = text(flags, flag, fallback, 64);
  if (!/^[^\s.*>]+$/.test(value)) throw invalid(flag, value, "no whitespace, '.', '*' or '>'");
  return value;
}

/** Worker ids show up in logs and metric labels, where whitespace only causes confusion. */
function identifier(flags: Flags, flag: keyof Flags): string {
  const raw = flags[flag];
  if (raw === undefined) return defaultWorkerId();
  const value = text(flags, flag, '', REPORT_LIMITS.maxIdLength);
  if (/\s/.test(value)) throw invalid(flag, value, 'no whitespace');
  return value;
}

function oneOf<T extends string>(
  flags: Flags,
  flag: keyof Flags,
  allowed: readonly T[],
  fallback: T,
): T {
  const raw = flags[flag];
  if (raw === undefined) return fallback;
  const value = allowed.find((candidate) => candidate === raw);
  if (value === undefined) throw invalid(flag, raw, `one of ${allowed.join(', ')}`);
  return value;
}

function httpUrl(flags: Flags, flag: keyof Flags): string | undefined {
  const raw = flags[flag];
  if (raw === undefined) return undefined;
  if (!/^https?:\/\//.test(raw) || !URL.canParse(raw)) {
    throw invalid(flag, raw, 'an http:// or https:// URL');
  }
  return raw.replace(/\/+$/, '');
}
