import { parseArgs } from 'node:util';
import { BRIDGE_DEFAULTS } from '../engine-bridge.options';
import { ENGINE_NAMES, EngineName } from '../engines/engine-adapter';
import { parseDnsTarget, parseTargetSpec, TargetSpecError } from '../targets/target';
import { BridgeConfigError } from './bridge-config.error';

/** Flags of contract §7; each also reads `SLUICE_<UPPER_SNAKE>` (lists: comma-separated). */
const FLAGS = {
  engine: { type: 'string' },
  target: { type: 'string', multiple: true },
  'targets-file': { type: 'string' },
  'dns-target': { type: 'string', multiple: true },
  'scrape-interval-ms': { type: 'string' },
  'scrape-timeout-ms': { type: 'string' },
  'down-after-ms': { type: 'string' },
  model: { type: 'string' },
  'max-num-batched-tokens': { type: 'string' },
  namespace: { type: 'string' },
  'nats-url': { type: 'string' },
  'http-host': { type: 'string' },
  'http-port': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type ListFlag = 'target' | 'dns-target';
type SingleFlag = Exclude<keyof typeof FLAGS, ListFlag | 'help'>;
type Values = Partial<Record<SingleFlag, string>> &
  Partial<Record<ListFlag, string[]>> & {
    help?: boolean;
  };

/** The standalone bridge's settings, validated. */
export interface BridgeFlags {
  readonly engine: EngineName;
  readonly targets: string[];
  readonly targetsFile: string | undefined;
  readonly dnsTargets: string[];
  readonly scrapeIntervalMs: number;
  readonly scrapeTimeoutMs: number;
  readonly downAfterMs: number;
  readonly model: string | undefined;
  readonly maxNumBatchedTokens: number | undefined;
  readonly namespace: string;
  readonly natsUrl: string;
  readonly httpHost: string;
  readonly httpPort: number;
}

export const BRIDGE_USAGE = `usage: node dist/apps/bridge/main.js --engine ${ENGINE_NAMES.join('|')} --nats-url URL
       (--target [NAME=]URL ... | --targets-file FILE | --dns-target NAME:PORT ...) [flags]
flags: ${Object.keys(FLAGS)
  .map((f) => `--${f}`)
  .join(' ')}
each flag can also be set as an environment variable SLUICE_<FLAG> (e.g. SLUICE_ENGINE=vllm;
lists comma-separated: SLUICE_TARGET=a=http://10.0.0.1:8000,http://10.0.0.2:8000)`;

export function bridgeEnvName(flag: string): string {
  return `SLUICE_${flag.replace(/-/g, '_').toUpperCase()}`;
}

/** True when argv asks for the usage text. */
export function wantsHelp(argv: string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/** Parses argv (without node and script) and the environment; throws BridgeConfigError. */
export function parseBridgeFlags(argv: string[], env: NodeJS.ProcessEnv = {}): BridgeFlags {
  let values: Values;
  try {
    values = parseArgs({ args: bindNegatives(argv), options: FLAGS, strict: true }).values;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const flag = /'(-[^'=]+)/.exec(message)?.[1] ?? 'command line';
    throw new BridgeConfigError(flag, flag, message.split('\n')[0]);
  }
  const r = new Reader(values, env);
  const engine = r.raw('engine');
  if (engine === undefined) throw new BridgeConfigError('--engine', '', 'required');
  if (!(ENGINE_NAMES as readonly string[]).includes(engine.value)) {
    throw new BridgeConfigError(
      engine.source,
      engine.value,
      `expected one of ${ENGINE_NAMES.join(', ')}`,
    );
  }
  const targets = r.list('target');
  const dnsTargets = r.list('dns-target');
  const targetsFile = r.raw('targets-file')?.value;
  for (const t of targets) r.check('target', t, () => parseTargetSpec(t));
  for (const d of dnsTargets) r.check('dns-target', d, () => parseDnsTarget(d));
  if (targets.length === 0 && dnsTargets.length === 0 && targetsFile === undefined) {
    throw new BridgeConfigError(
      '--target',
      '',
      'no targets: give --target, --targets-file or --dns-target',
    );
  }
  return {
    engine: engine.value as EngineName,
    targets,
    targetsFile,
    dnsTargets,
    scrapeIntervalMs: r.int('scrape-interval-ms', 1, 3_600_000) ?? BRIDGE_DEFAULTS.scrapeIntervalMs,
    scrapeTimeoutMs: r.int('scrape-timeout-ms', 1, 3_600_000) ?? BRIDGE_DEFAULTS.scrapeTimeoutMs,
    downAfterMs: r.int('down-after-ms', 1, 86_400_000) ?? BRIDGE_DEFAULTS.downAfterMs,
    model: r.pattern('model', /^\S(.{0,254}\S)?$/s, 'a name of 1-256 characters'),
    maxNumBatchedTokens: r.int('max-num-batched-tokens', 1, Number.MAX_SAFE_INTEGER),
    namespace:
      r.pattern('namespace', /^[A-Za-z0-9_-]+$/, 'letters, digits, _ or -') ??
      BRIDGE_DEFAULTS.namespace,
    natsUrl: natsUrl(r),
    httpHost: r.pattern('http-host', /^\S+$/, 'a host name or address') ?? '0.0.0.0',
    httpPort: r.int('http-port', 0, 65535) ?? 9400,
  };
}

function natsUrl(r: Reader): string {
  const raw = r.raw('nats-url');
  if (raw === undefined) throw new BridgeConfigError('--nats-url', '', 'required');
  if (!/^(nats|tls|ws|wss):\/\/[^\s]+$/.test(raw.value) || !URL.canParse(raw.value)) {
    // The URL may carry credentials: name the flag, not the value.
    throw new BridgeConfigError(
      raw.source,
      '<hidden>',
      'expected a URL like nats://127.0.0.1:4222',
    );
  }
  return raw.value;
}

class Reader {
  constructor(
    private readonly values: Values,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  raw(flag: SingleFlag): { value: string; source: string } | undefined {
    const v = this.values[flag];
    if (v !== undefined) return { value: v, source: `--${flag}` };
    const fromEnv = this.env[bridgeEnvName(flag)];
    return fromEnv ? { value: fromEnv, source: bridgeEnvName(flag) } : undefined;
  }

  list(flag: ListFlag): string[] {
    const v = this.values[flag];
    if (v?.length) return v;
    const fromEnv = this.env[bridgeEnvName(flag)] ?? '';
    return fromEnv
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }

  check(flag: ListFlag, value: string, parse: () => unknown): void {
    try {
      parse();
    } catch (err) {
      if (!(err instanceof TargetSpecError)) throw err;
      const source = this.values[flag]?.length ? `--${flag}` : bridgeEnvName(flag);
      throw new BridgeConfigError(source, value, err.message);
    }
  }

  int(flag: SingleFlag, min: number, max: number): number | undefined {
    const r = this.raw(flag);
    if (r === undefined) return undefined;
    const n = /^\s*-?\d+\s*$/.test(r.value) ? Number(r.value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new BridgeConfigError(r.source, r.value, `expected an integer in [${min}, ${max}]`);
    }
    return n;
  }

  pattern(flag: SingleFlag, re: RegExp, expected: string): string | undefined {
    const r = this.raw(flag);
    if (r === undefined) return undefined;
    if (!re.test(r.value)) throw new BridgeConfigError(r.source, r.value, `expected ${expected}`);
    return r.value;
  }
}

/** `--down-after-ms -1` must say "out of range", not "ambiguous option". */
function bindNegatives(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const [arg, next] = [argv[i], argv[i + 1]];
    if (
      arg.startsWith('--') &&
      arg.slice(2) in FLAGS &&
      next !== undefined &&
      /^-[\d.]/.test(next)
    ) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}
