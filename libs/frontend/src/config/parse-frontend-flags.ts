import { parseArgs } from 'node:util';
import { AdmissionControl, FrontendConfig, RouterMode } from './frontend-config';
import { FrontendConfigError } from './frontend-config.error';

/** Flags of contract §2 (and a few operational ones); each also reads `SLUICE_<UPPER_SNAKE>`. */
const FLAGS = {
  'http-host': { type: 'string' },
  'http-port': { type: 'string' },
  'admission-control': { type: 'string' },
  'active-decode-blocks-threshold': { type: 'string' },
  'active-prefill-tokens-threshold': { type: 'string' },
  'active-prefill-tokens-threshold-frac': { type: 'string' },
  'router-mode': { type: 'string' },
  'router-queue-threshold': { type: 'string' },
  'router-queue-max-depth': { type: 'string' },
  'router-queue-timeout-ms': { type: 'string' },
  'retry-after-secs': { type: 'string' },
  'worker-ttl-ms': { type: 'string' },
  'nats-url': { type: 'string' },
  namespace: { type: 'string' },
  'max-workers': { type: 'string' },
  'upstream-timeout-ms': { type: 'string' },
  'body-limit-bytes': { type: 'string' },
} as const;

type FlagName = keyof typeof FLAGS;

export const FRONTEND_USAGE = `usage: sluice-frontend [--flag value ...]
flags: ${Object.keys(FLAGS)
  .map((f) => `--${f}`)
  .join(' ')}
each flag can also be set as an environment variable SLUICE_<FLAG> (e.g. SLUICE_HTTP_PORT)`;

export function envName(flag: string): string {
  return `SLUICE_${flag.replace(/-/g, '_').toUpperCase()}`;
}

class FlagReader {
  constructor(
    private readonly values: Partial<Record<FlagName, string>>,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  raw(flag: FlagName): { value: string; source: string } | undefined {
    const fromArgs = this.values[flag];
    if (fromArgs !== undefined) return { value: fromArgs, source: `--${flag}` };
    const name = envName(flag);
    const fromEnv = this.env[name];
    if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: name };
    return undefined;
  }

  string(flag: FlagName, fallback: string): string {
    const r = this.raw(flag);
    if (r === undefined) return fallback;
    if (r.value.trim() === '')
      throw new FrontendConfigError(r.source, r.value, 'must not be empty');
    return r.value;
  }

  oneOf<T extends string>(flag: FlagName, allowed: readonly T[], fallback: T): T {
    const r = this.raw(flag);
    if (r === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(r.value)) {
      throw new FrontendConfigError(r.source, r.value, `expected one of ${allowed.join(', ')}`);
    }
    return r.value as T;
  }

  number(flag: FlagName, opts: { min: number; max?: number; integer?: boolean }): number | null {
    const r = this.raw(flag);
    if (r === undefined) return null;
    const n = r.value.trim() === '' ? NaN : Number(r.value);
    const kind = opts.integer ? 'an integer' : 'a finite number';
    const range = opts.max === undefined ? `>= ${opts.min}` : `in [${opts.min}, ${opts.max}]`;
    const ok =
      Number.isFinite(n) &&
      (!opts.integer || Number.isSafeInteger(n)) &&
      n >= opts.min &&
      (opts.max === undefined || n <= opts.max);
    if (!ok) throw new FrontendConfigError(r.source, r.value, `expected ${kind} ${range}`);
    return n;
  }
}

function parseNatsUrl(reader: FlagReader): string | null {
  const r = reader.raw('nats-url');
  if (r === undefined) return null;
  if (!/^(nats|tls|ws|wss):\/\/[^\s]+$/.test(r.value) || !URL.canParse(r.value)) {
    throw new FrontendConfigError(r.source, r.value, 'expected a URL like nats://127.0.0.1:4222');
  }
  return r.value;
}

/**
 * `--retry-after-secs -1` must be answered "-1 is out of range", not "ambiguous option":
 * a negative number after a known flag is bound to it as `--flag=-1` before parsing.
 */
function bindNegativeValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const next = argv[i + 1];
    if (
      arg.startsWith('--') &&
      arg.slice(2) in FLAGS &&
      next !== undefined &&
      /^-[\d.]/.test(next)
    ) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** Parses argv (without node and script) and the environment; throws FrontendConfigError. */
export function parseFrontendFlags(argv: string[], env: NodeJS.ProcessEnv = {}): FrontendConfig {
  let values: Partial<Record<FlagName, string>>;
  try {
    values = parseArgs({
      args: bindNegativeValues(argv),
      options: FLAGS,
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const flag = /'(-[^']+)'/.exec(message)?.[1] ?? argv.join(' ');
    throw new FrontendConfigError(flag, argv.join(' '), message);
  }
  const r = new FlagReader(values, env);
  const int = (flag: FlagName, min: number, fallback: number, max?: number): number =>
    r.number(flag, { min, max, integer: true }) ?? fallback;
  return new FrontendConfig({
    httpHost: r.string('http-host', '0.0.0.0'),
    httpPort: int('http-port', 0, 8000, 65535),
    admissionControl: r.oneOf<AdmissionControl>(
      'admission-control',
      ['token-capacity', 'none'],
      'none',
    ),
    thresholds: {
      activeDecodeBlocks: r.number('active-decode-blocks-threshold', { min: 0, max: 1 }),
      activePrefillTokens: r.number('active-prefill-tokens-threshold', { min: 0, integer: true }),
      activePrefillTokensFrac: r.number('active-prefill-tokens-threshold-frac', { min: 0 }),
    },
    routerMode: r.oneOf<RouterMode>(
      'router-mode',
      ['round-robin', 'random', 'least-loaded'],
      'round-robin',
    ),
    routerQueueThreshold: r.number('router-queue-threshold', { min: 0 }),
    routerQueueMaxDepth: int('router-queue-max-depth', 0, 1024),
    routerQueueTimeoutMs: int('router-queue-timeout-ms', 1, 30000),
    retryAfterSecs: int('retry-after-secs', 0, 1),
    workerTtlMs: int('worker-ttl-ms', 1, 10000),
    natsUrl: parseNatsUrl(r),
    namespace: parseNamespace(r),
    maxWorkers: int('max-workers', 1, 100000),
    upstreamTimeoutMs: int('upstream-timeout-ms', 1, 600000),
    bodyLimitBytes: int('body-limit-bytes', 1024, 16 * 1024 * 1024),
  });
}

function parseNamespace(r: FlagReader): string {
  const ns = r.string('namespace', 'dynamo');
  if (!/^[A-Za-z0-9_-]+$/.test(ns)) {
    throw new FrontendConfigError('--namespace', ns, 'expected letters, digits, _ or -');
  }
  return ns;
}
