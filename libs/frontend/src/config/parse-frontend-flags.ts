import { parseArgs } from 'node:util';
import { ENGINE_NAMES, EngineName, parseTargetSpec, TargetSpecError } from '@sluice/bridge';
import {
  AdmissionControl,
  EngineTarget,
  FrontendConfig,
  LogLevel,
  RouterMode,
} from './frontend-config';
import { ListItems, parseAdminTokens } from './admin-tokens';
import { FrontendConfigError } from './frontend-config.error';
import { THRESHOLD_SPECS } from './threshold-keys';

/** Flags of contract §2 (and a few operational ones); each also reads `SLUICE_<UPPER_SNAKE>`. */
const FLAGS = {
  'http-host': { type: 'string' },
  'http-port': { type: 'string' },
  'admission-control': { type: 'string' },
  'active-decode-blocks-threshold': { type: 'string' },
  'active-prefill-tokens-threshold': { type: 'string' },
  'active-prefill-tokens-threshold-frac': { type: 'string' },
  'waiting-requests-threshold': { type: 'string' },
  'router-mode': { type: 'string' },
  'router-queue-threshold': { type: 'string' },
  'router-queue-max-depth': { type: 'string' },
  'router-queue-timeout-ms': { type: 'string' },
  'retry-after-secs': { type: 'string' },
  'worker-ttl-ms': { type: 'string' },
  'nats-url': { type: 'string' },
  'database-url': { type: 'string' },
  'data-dir': { type: 'string' },
  'admin-token': { type: 'string', multiple: true },
  'admin-token-file': { type: 'string' },
  'engine-target': { type: 'string', multiple: true },
  'threshold-resync-ms': { type: 'string' },
  'log-level': { type: 'string' },
  'access-log': { type: 'string' },
  'shutdown-timeout-ms': { type: 'string' },
  'max-inflight-per-key': { type: 'string' },
  namespace: { type: 'string' },
  'max-workers': { type: 'string' },
  'max-tracked-ranks': { type: 'string' },
  'upstream-timeout-ms': { type: 'string' },
  'body-limit-bytes': { type: 'string' },
  'idle-timeout-ms': { type: 'string' },
  'max-upstream-body-bytes': { type: 'string' },
} as const;

type FlagName = keyof typeof FLAGS;
type ListFlag = 'admin-token' | 'engine-target';
type FlagValues = Partial<Record<Exclude<FlagName, ListFlag>, string>> &
  Partial<Record<ListFlag, string[]>>;

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
    private readonly values: FlagValues,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  raw(flag: Exclude<FlagName, ListFlag>): { value: string; source: string } | undefined {
    const fromArgs = this.values[flag];
    if (fromArgs !== undefined) return { value: fromArgs, source: `--${flag}` };
    const name = envName(flag);
    const fromEnv = this.env[name];
    if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: name };
    return undefined;
  }

  string(flag: Exclude<FlagName, ListFlag>, fallback: string): string {
    const r = this.raw(flag);
    if (r === undefined) return fallback;
    if (r.value.trim() === '')
      throw new FrontendConfigError(r.source, r.value, 'must not be empty');
    return r.value;
  }

  oneOf<T extends string>(
    flag: Exclude<FlagName, ListFlag>,
    allowed: readonly T[],
    fallback: T,
  ): T {
    const r = this.raw(flag);
    if (r === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(r.value)) {
      throw new FrontendConfigError(r.source, r.value, `expected one of ${allowed.join(', ')}`);
    }
    return r.value as T;
  }

  number(
    flag: Exclude<FlagName, ListFlag>,
    opts: { min: number; max?: number; integer?: boolean },
  ): number | null {
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
  let values: FlagValues;
  try {
    values = parseArgs({
      args: bindNegativeValues(argv),
      options: FLAGS,
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // Name only the offending option: the rest of the command line may hold tokens or passwords.
    const flag = /'(-[^'=]+)/.exec(message)?.[1] ?? 'command line';
    throw new FrontendConfigError(flag, flag, message.split('\n')[0]);
  }
  const r = new FlagReader(values, env);
  const int = (
    flag: Exclude<FlagName, ListFlag>,
    min: number,
    fallback: number,
    max?: number,
  ): number => r.number(flag, { min, max, integer: true }) ?? fallback;
  return new FrontendConfig({
    httpHost: r.string('http-host', '0.0.0.0'),
    httpPort: int('http-port', 0, 8000, 65535),
    admissionControl: r.oneOf<AdmissionControl>(
      'admission-control',
      ['token-capacity', 'none'],
      'none',
    ),
    thresholds: Object.fromEntries(THRESHOLD_SPECS.map((s) => [s.key, r.number(s.flag, s.range)])),
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
    databaseUrl: parseDatabaseUrl(r),
    dataDir: r.string('data-dir', './data'),
    adminTokens: parseAdminTokens(listFlag(values, env, 'admin-token'), adminTokenFile(r)),
    engineTargets: parseEngineTargets(listFlag(values, env, 'engine-target')),
    thresholdResyncMs: int('threshold-resync-ms', 100, 5000),
    logLevel: r.oneOf<LogLevel>('log-level', ['debug', 'info', 'warn', 'error'], 'info'),
    accessLog: r.oneOf('access-log', ['true', 'false'], 'false') === 'true',
    shutdownTimeoutMs: int('shutdown-timeout-ms', 0, 30000),
    maxInflightPerKey: r.number('max-inflight-per-key', { min: 1, integer: true }),
    namespace: parseNamespace(r),
    maxWorkers: int('max-workers', 1, 100000),
    maxTrackedRanks: int('max-tracked-ranks', 1, 262144),
    upstreamTimeoutMs: int('upstream-timeout-ms', 1, 600000),
    bodyLimitBytes: int('body-limit-bytes', 1024, 16 * 1024 * 1024),
    idleTimeoutMs: int('idle-timeout-ms', 1, 60000),
    maxUpstreamBodyBytes: int('max-upstream-body-bytes', 1024, 64 * 1024 * 1024),
  });
}

function parseDatabaseUrl(reader: FlagReader): string | null {
  const r = reader.raw('database-url');
  if (r === undefined) return null;
  if (!/^postgres(ql)?:\/\//.test(r.value) || !URL.canParse(r.value)) {
    // The URL may hold a password: name the flag, not the value.
    throw new FrontendConfigError(r.source, '<hidden>', 'expected postgres://user@host:port/db');
  }
  return r.value;
}

function adminTokenFile(r: FlagReader): { path: string; source: string } | undefined {
  const file = r.raw('admin-token-file');
  return file && { path: file.value, source: file.source };
}

/**
 * A repeatable flag's items and where they came from: the flags if given, else the
 * comma-separated environment variable.
 */
function listFlag(values: FlagValues, env: NodeJS.ProcessEnv, flag: ListFlag): ListItems {
  const fromArgs = values[flag];
  if (fromArgs?.length) return { source: `--${flag}`, items: fromArgs };
  const name = envName(flag);
  return { source: name, items: (env[name] ?? '').split(',').filter(Boolean) };
}

/** `ENGINE=[NAME=]URL` each: an engine the in-process bridge scrapes (contract §7). */
function parseEngineTargets({ source, items }: ListItems): EngineTarget[] {
  const targets: EngineTarget[] = [];
  for (const item of items) {
    const i = item.indexOf('=');
    const engine = item.slice(0, Math.max(i, 0));
    if (!(ENGINE_NAMES as readonly string[]).includes(engine)) {
      throw new FrontendConfigError(
        source,
        item,
        `expected ENGINE=[NAME=]URL with ENGINE one of ${ENGINE_NAMES.join(', ')}`,
      );
    }
    const spec = item.slice(i + 1);
    try {
      parseTargetSpec(spec);
    } catch (err) {
      if (!(err instanceof TargetSpecError)) throw err;
      // A URL with user-info is refused; its password must not be echoed either.
      throw new FrontendConfigError(source, item.replace(/\/\/[^/@]*@/, '//***@'), err.message);
    }
    targets.push({ engine: engine as EngineName, spec });
  }
  return targets;
}

function parseNamespace(r: FlagReader): string {
  const ns = r.string('namespace', 'dynamo');
  if (!/^[A-Za-z0-9_-]+$/.test(ns)) {
    const source = r.raw('namespace')?.source ?? '--namespace';
    throw new FrontendConfigError(source, ns, 'expected letters, digits, _ or -');
  }
  return ns;
}
