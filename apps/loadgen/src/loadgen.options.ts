import {
  FlagValueError,
  formatUsage,
  integerIn,
  InvalidFlagValue,
  nonEmpty,
  numberIn,
  oneOf,
  parseFlags,
  switchFlag,
  valueFlag,
  wantsHelp,
} from '@sluice/cli';

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
export class LoadgenUsageError extends FlagValueError {
  override name = 'LoadgenUsageError';
}

/** Samples are kept per request for exact percentiles, so a run is bounded in count too. */
export const MAX_ARRIVALS = 1_000_000;

export const LOADGEN_FLAGS = {
  url: valueFlag({
    arg: 'URL',
    help: 'Sluice base URL',
    parse: parseUrl,
    default: new URL('http://127.0.0.1:8000'),
  }),
  model: valueFlag({
    arg: 'NAME',
    help: 'model to request',
    parse: nonEmpty,
    default: 'Qwen/Qwen3-0.6B',
  }),
  rate: valueFlag({
    arg: 'N',
    help: 'arrivals per second',
    parse: numberIn({ min: 0, max: 100_000, exclusiveMin: true }),
    default: 20,
  }),
  duration: valueFlag({
    arg: 'S',
    help: `send window in seconds; rate x duration <= ${MAX_ARRIVALS}`,
    parse: numberIn({ min: 0, max: 86_400, exclusiveMin: true }),
    default: 30,
  }),
  'prompt-tokens': valueFlag({
    arg: 'N',
    help: 'approximate prompt size, varied text per request',
    parse: integerIn(1, 1_000_000),
    default: 1000,
  }),
  'max-tokens': valueFlag({
    arg: 'N',
    help: 'max_tokens of each request',
    parse: integerIn(1, 1_000_000),
    default: 300,
  }),
  endpoint: valueFlag({
    arg: 'chat|completions',
    help: 'which OpenAI endpoint',
    parse: oneOf<Endpoint>(['chat', 'completions']),
    default: 'chat' as const,
  }),
  stream: switchFlag({ help: 'stream responses; TTFT is the first SSE data event', default: true }),
  'max-inflight': valueFlag({
    arg: 'N',
    help: 'hard cap on requests in flight; later arrivals are dropped',
    parse: integerIn(1, 65_536),
    default: 4096,
  }),
  'drain-timeout': valueFlag({
    arg: 'S',
    help: 'then wait this long for requests in flight, abort the rest',
    parse: numberIn({ min: 0, max: 86_400 }),
    default: 120,
  }),
  json: switchFlag({ help: 'print the summary as one JSON line on stdout', default: false }),
  quiet: switchFlag({ help: 'no progress line on stderr', default: false }),
};

export const LOADGEN_USAGE = formatUsage(LOADGEN_FLAGS, {
  synopsis: 'usage: npm run loadgen -- [flags]',
  about: [
    'Open-loop load generator: sends --rate requests/s for --duration seconds whatever the answers.',
  ],
});

function parseUrl(raw: string): URL {
  const url = URL.canParse(raw) ? new URL(raw) : null;
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new InvalidFlagValue('expected an http(s) URL like http://127.0.0.1:8000');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new InvalidFlagValue('expected a base URL without query or fragment');
  }
  return url;
}

/** Parses argv without node and script name; throws LoadgenUsageError. */
export function parseLoadgenOptions(argv: readonly string[]): LoadgenOptions {
  const { values: v } = parseFlags(
    LOADGEN_FLAGS,
    argv,
    {},
    {
      // Shows the arguments as typed, e.g. `--rate -5` or `--json=yes`.
      error: (p) =>
        new LoadgenUsageError(p.flag, p.value, p.reason, `${p.message} (got '${p.given}')`),
    },
  );
  if (v.rate * v.duration > MAX_ARRIVALS) {
    const reason = `--rate ${v.rate} for that long is more than ${MAX_ARRIVALS} requests`;
    throw new LoadgenUsageError('--duration', String(v.duration), reason);
  }
  return {
    url: new URL(v.url),
    model: v.model,
    rate: v.rate,
    durationS: v.duration,
    promptTokens: v['prompt-tokens'],
    maxTokens: v['max-tokens'],
    endpoint: v.endpoint,
    stream: v.stream,
    maxInflight: v['max-inflight'],
    drainTimeoutS: v['drain-timeout'],
    json: v.json,
    quiet: v.quiet,
  };
}

/** `--help`, or the options of a run; throws LoadgenUsageError. */
export function parseLoadgenArgs(argv: readonly string[]): LoadgenCommand {
  return wantsHelp(argv) ? { kind: 'help' } : { kind: 'run', options: parseLoadgenOptions(argv) };
}
