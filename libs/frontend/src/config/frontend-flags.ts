import {
  ENGINE_NAMES,
  EngineName,
  LLAMACPP_KV_CACHES,
  LlamacppKvCache,
  parseTargetSpec,
  TargetSpecError,
} from '@sluice/bridge';
import {
  integerIn,
  InvalidFlagValue,
  listFlag,
  matching,
  natsUrl,
  nonEmpty,
  numberIn,
  oneOf,
  postgresUrl,
  ValueFlag,
  valueFlag,
} from '@sluice/cli';
import { EngineTarget, FrontendConfig, LogLevel, RouterMode } from './frontend-config';
import { parsePriorityFactors, parsePriorityHeader } from './priority';
import {
  isEnumSpec,
  THRESHOLD_SPECS,
  ThresholdSpec,
  ThresholdSpecShape,
  ThresholdValue,
} from './threshold-keys';

/** The defaults live on FrontendConfig, which code and tests also build without flags. */
const D = new FrontendConfig();

const int = (arg: string, help: string, fallback: number, min: number, max?: number) =>
  valueFlag({ arg, help, parse: integerIn(min, max), default: fallback });

/** The flag of one per-model key: a number, or one of its words. */
type FlagOf<S> = S extends { readonly values: readonly (infer V)[]; readonly default: infer D }
  ? ValueFlag<V | D>
  : ValueFlag<number | null>;

function thresholdFlag(spec: ThresholdSpecShape): ValueFlag<ThresholdValue | null> {
  if (isEnumSpec(spec)) {
    const arg = spec.values.join('|');
    return valueFlag({ arg, help: spec.help, parse: oneOf(spec.values), default: spec.default });
  }
  return valueFlag({
    arg:
      spec.kind === 'objective'
        ? spec.range.integer
          ? 'MS'
          : 'F'
        : spec.range.integer
          ? 'N'
          : 'F',
    help:
      'help' in spec ? spec.help : 'global default busy threshold (per-model values: admin API)',
    parse: numberIn(spec.range),
    default: null,
  });
}

/** The global default of each per-model key, in the table's order; unset: never fires. */
const THRESHOLD_FLAGS = Object.fromEntries(
  THRESHOLD_SPECS.map((s) => [s.flag, thresholdFlag(s)]),
) as { [S in ThresholdSpec as S['flag']]: FlagOf<S> };

/** Flags of contract §2 (and a few operational ones); each also reads `SLUICE_<UPPER_SNAKE>`. */
export const FRONTEND_FLAGS = {
  'http-host': valueFlag({
    arg: 'HOST',
    help: 'listen address',
    parse: nonEmpty,
    default: D.httpHost,
  }),
  'http-port': int('PORT', 'listen port', D.httpPort, 0, 65535),
  ...THRESHOLD_FLAGS,
  'ttft-slo-sample': valueFlag({
    arg: 'P',
    help: 'share of would-be TTFT-objective refusals admitted anyway, to check the gate',
    parse: numberIn({ min: 0, max: 1 }),
    default: D.ttftSloSample,
  }),
  'busy-release-factor': valueFlag({
    arg: 'F',
    help: 'hysteresis: a busy rank turns free only at or below threshold x F',
    parse: numberIn({ min: 0, max: 1, exclusiveMin: true }),
    default: D.busyReleaseFactor,
  }),
  'busy-min-dwell-ms': int(
    'MS',
    'a rank keeps a new busy or free state this long',
    D.busyMinDwellMs,
    0,
  ),
  'router-mode': valueFlag({
    arg: 'round-robin|random|least-loaded',
    help: 'how a free worker is picked',
    parse: oneOf<RouterMode>(['round-robin', 'random', 'least-loaded']),
    default: D.routerMode,
  }),
  'router-queue-threshold': valueFlag({
    arg: 'F',
    help: 'queue a request when every free worker has F x max_num_batched_tokens in flight',
    parse: numberIn({ min: 0 }),
    default: D.routerQueueThreshold,
  }),
  'router-queue-max-depth': int('N', 'requests the queue holds', D.routerQueueMaxDepth, 0),
  'router-queue-timeout-ms': int('MS', 'longest wait in the queue', D.routerQueueTimeoutMs, 1),
  'retry-after-secs': valueFlag({
    arg: 'S|auto',
    help: 'Retry-After of overload answers (0: none; auto: when a worker is expected free)',
    parse: secondsOrAuto,
    default: D.retryAfterSecs,
  }),
  'worker-ttl-ms': int('MS', 'forget a worker silent this long', D.workerTtlMs, 1),
  'nats-url': valueFlag({
    arg: 'URL',
    help: 'NATS server; unset: in-process bus',
    parse: natsUrl({ secret: false }),
    default: D.natsUrl,
  }),
  'database-url': valueFlag({
    arg: 'URL',
    help: 'PostgreSQL; unset: embedded database under --data-dir',
    parse: postgresUrl,
    default: D.databaseUrl,
  }),
  'data-dir': valueFlag({
    arg: 'DIR',
    help: 'embedded database directory',
    parse: nonEmpty,
    default: D.dataDir,
  }),
  'admin-token': listFlag({ arg: 'NAME:TOKEN', help: 'bearer token allowed to change thresholds' }),
  'admin-token-file': valueFlag({
    arg: 'FILE',
    help: 'NAME:TOKEN lines',
    parse: (raw) => raw,
    default: undefined,
  }),
  'engine-target': listFlag({
    arg: 'ENGINE=[NAME=]URL',
    help: 'an engine scraped by the in-process bridge',
    parse: parseEngineTarget,
  }),
  'llamacpp-kv-cache': valueFlag({
    arg: LLAMACPP_KV_CACHES.join('|'),
    help: 'llama.cpp engine targets: each slot owns a context window (-np N), or the slots share one cache (--kv-unified)',
    parse: oneOf<LlamacppKvCache>(LLAMACPP_KV_CACHES),
    default: D.llamacppKvCache,
  }),
  'threshold-resync-ms': int('MS', 'reload of every stored threshold', D.thresholdResyncMs, 100),
  'log-level': valueFlag({
    arg: 'debug|info|warn|error',
    help: 'least severe level logged',
    parse: oneOf<LogLevel>(['debug', 'info', 'warn', 'error']),
    default: D.logLevel,
  }),
  'access-log': valueFlag({
    arg: 'true|false',
    help: 'one log line per request',
    parse: (raw) => oneOf(['true', 'false'])(raw) === 'true',
    default: D.accessLog,
  }),
  'shutdown-timeout-ms': int(
    'MS',
    'wait for requests in flight at shutdown',
    D.shutdownTimeoutMs,
    0,
  ),
  'max-inflight-per-key': valueFlag({
    arg: 'N',
    help: 'example policy: requests in flight per API key',
    parse: integerIn(1),
    default: D.maxInflightPerKey,
  }),
  'priority-header': valueFlag({
    arg: 'NAME|none',
    help: 'header carrying the priority class (critical, standard, sheddable); none: all standard',
    parse: parsePriorityHeader,
    default: D.priorityHeader,
  }),
  'priority-factor': listFlag({
    arg: 'CLASS=F[,CLASS=F]',
    help: `thresholds x F for a class (default sheddable=${D.priorityFactors.sheddable},critical=${D.priorityFactors.critical})`,
    parse: parsePriorityFactors,
  }),
  'priority-key-file': valueFlag({
    arg: 'FILE',
    help: 'CLASS:API_KEY lines: the highest class each key may use',
    parse: nonEmpty,
    default: undefined,
  }),
  namespace: valueFlag({
    arg: 'NS',
    help: 'NATS subject namespace',
    parse: (raw) => matching(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ or -')(nonEmpty(raw)),
    default: D.namespace,
  }),
  'max-workers': int('N', 'workers tracked at most', D.maxWorkers, 1),
  'max-tracked-ranks': int('N', 'data-parallel ranks tracked at most', D.maxTrackedRanks, 1),
  'upstream-timeout-ms': int('MS', 'longest wait for a worker', D.upstreamTimeoutMs, 1),
  'body-limit-bytes': int('N', 'largest request body', D.bodyLimitBytes, 1024),
  'idle-timeout-ms': int('MS', 'close a connection idle this long', D.idleTimeoutMs, 1),
  'max-upstream-body-bytes': int('N', 'largest worker answer read', D.maxUpstreamBodyBytes, 1024),
};

/** `--retry-after-secs`: whole seconds, or `auto` (measured, contract §8). */
function secondsOrAuto(raw: string): number | 'auto' {
  if (raw === 'auto') return raw;
  try {
    return integerIn(0)(raw);
  } catch {
    throw new InvalidFlagValue('expected an integer >= 0, or auto');
  }
}

/** `ENGINE=[NAME=]URL`: an engine the in-process bridge scrapes (contract §7). */
function parseEngineTarget(item: string): EngineTarget {
  const i = item.indexOf('=');
  const engine = item.slice(0, Math.max(i, 0));
  if (!(ENGINE_NAMES as readonly string[]).includes(engine)) {
    throw new InvalidFlagValue(
      `expected ENGINE=[NAME=]URL with ENGINE one of ${ENGINE_NAMES.join(', ')}`,
    );
  }
  const spec = item.slice(i + 1);
  try {
    parseTargetSpec(spec);
  } catch (err) {
    if (!(err instanceof TargetSpecError)) throw err;
    // A URL with user-info is refused; its password must not be echoed either.
    throw new InvalidFlagValue(err.message, item.replace(/\/\/[^/@]*@/, '//***@'));
  }
  return { engine: engine as EngineName, spec };
}
