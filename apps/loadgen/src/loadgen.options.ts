import { parseArgs } from 'node:util';

export type Endpoint = 'chat' | 'completions';

export interface LoadgenOptions {
  /** Base URL of Sluice; request paths (`/v1/...`) are appended to its path. */
  url: URL;
  model: string;
  rate: number;
  durationS: number;
  promptTokens: number;
  maxTokens: number;
  endpoint: Endpoint;
  stream: boolean;
  maxInflight: number;
  drainTimeoutS: number;
  json: boolean;
  quiet: boolean;
}

export type LoadgenCommand = { kind: 'help' } | { kind: 'run'; options: LoadgenOptions };

/** A bad flag; `main` prints it with the usage and exits with code 2. */
export class LoadgenUsageError extends Error {
  constructor(
    readonly flag: string,
    readonly value: string,
    message: string,
  ) {
    super(message);
    this.name = 'LoadgenUsageError';
  }

  static invalidValue(flag: string, value: string, reason: string): LoadgenUsageError {
    return new LoadgenUsageError(flag, value, `invalid value '${value}' for ${flag}: ${reason}`);
  }
}

const FLAGS = {
  url: { type: 'string', default: 'http://127.0.0.1:8000' },
  model: { type: 'string', default: 'Qwen/Qwen3-0.6B' },
  rate: { type: 'string', default: '20' },
  duration: { type: 'string', default: '30' },
  'prompt-tokens': { type: 'string', default: '1000' },
  'max-tokens': { type: 'string', default: '300' },
  endpoint: { type: 'string', default: 'chat' },
  stream: { type: 'boolean', default: true },
  'max-inflight': { type: 'string', default: '4096' },
  'drain-timeout': { type: 'string', default: '120' },
  json: { type: 'boolean', default: false },
  quiet: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export const LOADGEN_USAGE = `usage: npm run loadgen -- [flags]
Open-loop load generator: sends --rate requests/s for --duration seconds whatever the answers.
  --url URL             Sluice base URL (default http://127.0.0.1:8000)
  --model NAME          model to request (default Qwen/Qwen3-0.6B)
  --rate N              arrivals per second, > 0 (default 20)
  --duration S          send window in seconds, > 0 (default 30); rate x duration <= 1000000
  --prompt-tokens N     approximate prompt size, varied text per request (default 1000)
  --max-tokens N        max_tokens of each request (default 300)
  --endpoint E          chat | completions (default chat)
  --stream/--no-stream  stream responses; TTFT is the first SSE data event (default --stream)
  --max-inflight N      hard cap on requests in flight; later arrivals are dropped (default 4096)
  --drain-timeout S     then wait this long for requests in flight, abort the rest (default 120)
  --json                print the summary as one JSON line on stdout
  --quiet               no progress line on stderr
`;

interface NumberRule {
  min: number;
  max: number;
  integer?: boolean;
  /** `min` itself is not allowed (rate and duration must be > 0). */
  exclusiveMin?: boolean;
}

export function parseNumberFlag(flag: string, raw: string, rule: NumberRule): number {
  const n = raw.trim() === '' ? NaN : Number(raw);
  const kind = rule.integer ? 'an integer' : 'a number';
  const lower = rule.exclusiveMin ? `> ${rule.min}` : `>= ${rule.min}`;
  const ok =
    Number.isFinite(n) &&
    (!rule.integer || Number.isSafeInteger(n)) &&
    (rule.exclusiveMin ? n > rule.min : n >= rule.min) &&
    n <= rule.max;
  if (!ok)
    throw LoadgenUsageError.invalidValue(flag, raw, `expected ${kind} ${lower} and <= ${rule.max}`);
  return n;
}

function parseUrl(raw: string): URL {
  const url = URL.canParse(raw) ? new URL(raw) : null;
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw LoadgenUsageError.invalidValue(
      '--url',
      raw,
      'expected an http(s) URL like http://127.0.0.1:8000',
    );
  }
  if (url.search !== '' || url.hash !== '') {
    throw LoadgenUsageError.invalidValue(
      '--url',
      raw,
      'expected a base URL without query or fragment',
    );
  }
  return url;
}

function parseEndpoint(raw: string): Endpoint {
  if (raw === 'chat' || raw === 'completions') return raw;
  throw LoadgenUsageError.invalidValue('--endpoint', raw, 'expected one of chat, completions');
}

function parseModel(raw: string): string {
  if (raw.trim() === '') throw LoadgenUsageError.invalidValue('--model', raw, 'must not be empty');
  return raw;
}

function parseFlags(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    options: FLAGS,
    strict: true,
    allowPositionals: false,
    allowNegative: true,
  }).values;
}

/** Turns a parseArgs failure (unknown flag, missing value, ...) into a usage error naming it. */
function usageErrorFrom(err: unknown, argv: readonly string[]): LoadgenUsageError {
  const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
  const flag = /'(-[^' =]+)/.exec(reason)?.[1] ?? argv.join(' ');
  const at = argv.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
  const given = at < 0 ? flag : argv.slice(at, argv[at].includes('=') ? at + 1 : at + 2).join(' ');
  return new LoadgenUsageError(flag, given, `${reason} (got '${given}')`);
}

/** Samples are kept per request for exact percentiles, so a run is bounded in count too. */
export const MAX_ARRIVALS = 1_000_000;

const positive = (flag: string, raw: string, max: number): number =>
  parseNumberFlag(flag, raw, { min: 0, max, exclusiveMin: true });
const integer = (flag: string, raw: string, min: number, max: number): number =>
  parseNumberFlag(flag, raw, { min, max, integer: true });

/** Parses argv without node and script name; throws LoadgenUsageError. */
export function parseLoadgenArgs(argv: readonly string[]): LoadgenCommand {
  let v: ReturnType<typeof parseFlags>;
  try {
    v = parseFlags(argv);
  } catch (err) {
    throw usageErrorFrom(err, argv);
  }
  if (v.help) return { kind: 'help' };
  const rate = positive('--rate', v.rate, 100_000);
  const durationS = positive('--duration', v.duration, 86_400);
  if (rate * durationS > MAX_ARRIVALS) {
    const reason = `--rate ${v.rate} for that long is more than ${MAX_ARRIVALS} requests`;
    throw LoadgenUsageError.invalidValue('--duration', v.duration, reason);
  }
  return {
    kind: 'run',
    options: {
      url: parseUrl(v.url),
      model: parseModel(v.model),
      rate,
      durationS,
      promptTokens: integer('--prompt-tokens', v['prompt-tokens'], 1, 1_000_000),
      maxTokens: integer('--max-tokens', v['max-tokens'], 1, 1_000_000),
      endpoint: parseEndpoint(v.endpoint),
      stream: v.stream,
      maxInflight: integer('--max-inflight', v['max-inflight'], 1, 65_536),
      drainTimeoutS: parseNumberFlag('--drain-timeout', v['drain-timeout'], {
        min: 0,
        max: 86_400,
      }),
      json: v.json,
      quiet: v.quiet,
    },
  };
}
