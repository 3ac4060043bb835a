import {
  envName,
  flagErrorAs,
  formatUsage,
  integerIn,
  InvalidFlagValue,
  listFlag,
  matching,
  natsUrl,
  oneOf,
  parseFlags,
  valueFlag,
} from '@sluice/cli';
import { BRIDGE_DEFAULTS } from '../engine-bridge.options';
import { ENGINE_NAMES, EngineName } from '../engines/engine-adapter';
import { LLAMACPP_KV_CACHES, LlamacppKvCache } from '../engines/llamacpp.adapter';
import { parseDnsTarget, parseTargetSpec, TargetSpecError } from '../targets/target';
import { BridgeConfigError } from './bridge-config.error';

const ENV_PREFIX = 'SLUICE_';

const int = <D extends number | undefined>(
  arg: string,
  help: string,
  fallback: D,
  min: number,
  max: number,
) => valueFlag({ arg, help, parse: integerIn(min, max), default: fallback });

/** Keeps the item as written once `check` accepts it; its TargetSpecError names what is wrong. */
const checked =
  (check: (item: string) => unknown) =>
  (item: string): string => {
    try {
      check(item);
    } catch (err) {
      if (!(err instanceof TargetSpecError)) throw err;
      throw new InvalidFlagValue(err.message);
    }
    return item;
  };

/** Flags of docs/engines.md; each also reads `SLUICE_<UPPER_SNAKE>` (lists: comma-separated). */
export const BRIDGE_FLAGS = {
  engine: valueFlag({
    arg: ENGINE_NAMES.join('|'),
    help: 'the engine behind every target (required)',
    parse: oneOf<EngineName>(ENGINE_NAMES),
    default: undefined,
  }),
  target: listFlag({
    arg: '[NAME=]URL',
    help: "an engine to scrape; NAME is its worker id (default: the URL's host:port)",
    parse: checked(parseTargetSpec),
  }),
  'targets-file': valueFlag({
    arg: 'FILE',
    help: 'one [NAME=]URL a line, re-read when it changes',
    parse: (raw) => raw,
    default: undefined,
  }),
  'dns-target': listFlag({
    arg: 'NAME:PORT',
    help: 'every address NAME resolves to is a target, re-resolved every 5 s (a headless Service)',
    parse: checked(parseDnsTarget),
  }),
  'scrape-interval-ms': int(
    'MS',
    'time between scrapes',
    BRIDGE_DEFAULTS.scrapeIntervalMs,
    1,
    3_600_000,
  ),
  'scrape-timeout-ms': int(
    'MS',
    'deadline over the whole scrape of one target',
    BRIDGE_DEFAULTS.scrapeTimeoutMs,
    1,
    3_600_000,
  ),
  'down-after-ms': int(
    'MS',
    'an engine failing its scrapes this long gets worker_down; reports resume when it answers',
    BRIDGE_DEFAULTS.downAfterMs,
    1,
    86_400_000,
  ),
  model: valueFlag({
    arg: 'NAME',
    help: 'model name reported instead of the engine’s',
    parse: matching(/^\S(.{0,254}\S)?$/s, 'a name of 1-256 characters'),
    default: undefined,
  }),
  'max-num-batched-tokens': int(
    'N',
    'max_num_batched_tokens put in reports for engines that do not export it (vLLM)',
    undefined,
    1,
    Number.MAX_SAFE_INTEGER,
  ),
  'llamacpp-kv-cache': valueFlag<LlamacppKvCache>({
    arg: LLAMACPP_KV_CACHES.join('|'),
    help: 'llama.cpp: each slot owns a context window (-np N), or the slots share one cache (--kv-unified)',
    parse: oneOf<LlamacppKvCache>(LLAMACPP_KV_CACHES),
    default: 'per-slot',
  }),
  namespace: valueFlag({
    arg: 'NS',
    help: 'NATS subject namespace',
    parse: matching(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ or -'),
    default: BRIDGE_DEFAULTS.namespace,
  }),
  'nats-url': valueFlag({
    arg: 'URL',
    help: 'NATS server the reports go to (required)',
    parse: natsUrl,
    default: undefined,
  }),
  'http-host': valueFlag({
    arg: 'HOST',
    help: 'address of GET /metrics and /health',
    parse: matching(/^\S+$/, 'a host name or address'),
    default: '0.0.0.0',
  }),
  'http-port': int('PORT', 'port of GET /metrics and /health', 9400, 0, 65535),
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
  readonly llamacppKvCache: LlamacppKvCache;
  readonly namespace: string;
  readonly natsUrl: string;
  readonly httpHost: string;
  readonly httpPort: number;
}

export const BRIDGE_USAGE = formatUsage(
  BRIDGE_FLAGS,
  {
    synopsis: `usage: node dist/apps/bridge/main.js --engine ${ENGINE_NAMES.join('|')} --nats-url URL
       (--target [NAME=]URL ... | --targets-file FILE | --dns-target NAME:PORT ...) [flags]`,
  },
  ENV_PREFIX,
);

export function bridgeEnvName(flag: string): string {
  return envName(ENV_PREFIX, flag);
}

/** Parses argv (without node and script) and the environment; throws BridgeConfigError. */
export function parseBridgeFlags(argv: string[], env: NodeJS.ProcessEnv = {}): BridgeFlags {
  const { values: v } = parseFlags(BRIDGE_FLAGS, argv, env, {
    envPrefix: ENV_PREFIX,
    error: flagErrorAs(BridgeConfigError),
  });
  if (v.engine === undefined) throw new BridgeConfigError('--engine', '', 'required');
  if (v.target.length === 0 && v['dns-target'].length === 0 && !v['targets-file']) {
    throw new BridgeConfigError(
      '--target',
      '',
      'no targets: give --target, --targets-file or --dns-target',
    );
  }
  if (v['nats-url'] === undefined) throw new BridgeConfigError('--nats-url', '', 'required');
  return {
    engine: v.engine,
    targets: v.target,
    targetsFile: v['targets-file'],
    dnsTargets: v['dns-target'],
    scrapeIntervalMs: v['scrape-interval-ms'],
    scrapeTimeoutMs: v['scrape-timeout-ms'],
    downAfterMs: v['down-after-ms'],
    model: v.model,
    maxNumBatchedTokens: v['max-num-batched-tokens'],
    llamacppKvCache: v['llamacpp-kv-cache'],
    namespace: v.namespace,
    natsUrl: v['nats-url'],
    httpHost: v['http-host'],
    httpPort: v['http-port'],
  };
}
