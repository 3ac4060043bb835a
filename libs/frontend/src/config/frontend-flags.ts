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
  switchFlag,
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
    help: spec.help,
    parse: numberIn(spec.range),
    default: null,
  });
}

/** The global default of each per-model key, in the table's order; unset: never fires. */
const THRESHOLD_FLAGS = Object.fromEntries(
  THRESHOLD_SPECS.map((s) => [s.flag, thresholdFlag(s)]),
) as { [S in ThresholdSpec as S['flag']]: FlagOf<S> };

/** Flags of docs/configuration.md (and a few operational ones); each also reads `SLUICE_<UPPER_SNAKE>`. */
export const FRONTEND_FLAGS = {
  'http-host': valueFlag({
    arg: 'HOST',
    help: 'address the HTTP server listens on',
    parse: nonEmpty,
    default: D.httpHost,
  }),
  'http-port': int('PORT', 'port the HTTP server listens on', D.httpPort, 0, 65535),
  ...THRESHOLD_FLAGS,
  'ttft-slo-sample': valueFlag({
    arg: 'P',
    help: 'share of would-be TTFT-objective refusals admitted anyway, to check the gate',
    parse: numberIn({ min: 0, max: 1 }),
    default: D.ttftSloSample,
  }),
  'explore-interval-ms': int(
    'MS',
    'the TTFT objective sends a would-be refusal to a worker predicted over it at most once per this long, to check the prediction',
    D.exploreIntervalMs,
    1,
  ),
  'busy-release-factor': valueFlag({
    arg: 'F',
    help: 'hysteresis: a busy rank turns free only at or below threshold x F',
    parse: numberIn({ min: 0, max: 1, exclusiveMin: true }),
    default: D.busyReleaseFactor,
  }),
  'busy-min-dwell-ms': int(
    'MS',
    'a rank keeps a new busy or free state at least this long',
    D.busyMinDwellMs,
    0,
  ),
  'router-mode': valueFlag({
    arg: 'round-robin|random|least-loaded',
    help: 'how a free worker is picked (least-loaded: fewest prompt tokens in flight from here)',
    parse: oneOf<RouterMode>(['round-robin', 'random', 'least-loaded']),
    default: D.routerMode,
  }),
  'router-queue-threshold': valueFlag({
    arg: 'F',
    help: 'hold requests in a bounded queue while every free worker has more than F x max_num_batched_tokens prompt tokens in flight from here; unset: only critical requests wait (for room lower classes hold)',
    parse: numberIn({ min: 0 }),
    default: D.routerQueueThreshold,
  }),
  'router-queue-max-depth': int(
    'N',
    'requests the router queue holds; one more is refused as overloaded',
    D.routerQueueMaxDepth,
    0,
  ),
  'router-queue-timeout-ms': int(
    'MS',
    'a request waiting longer in the router queue is refused as overloaded',
    D.routerQueueTimeoutMs,
    1,
  ),
  'retry-after-secs': valueFlag({
    arg: 'S|auto',
    help: 'Retry-After header of overload answers in seconds (0: none; auto: when a worker of the model is expected free, 1 to 60)',
    parse: secondsOrAuto,
    default: D.retryAfterSecs,
  }),
  'worker-ttl-ms': int(
    'MS',
    'a worker with no load report for this long is forgotten',
    D.workerTtlMs,
    1,
  ),
  'reservation-share-interval-ms': int(
    'MS',
    'replicas share what they sent each worker since its report over NATS, coalesced over this long; 0: not shared',
    D.reservationShareIntervalMs,
    0,
    1000,
  ),
  'reservation-share-ttl-ms': int(
    'MS',
    "another replica's shared reservations count until this long after its last message (it repeats them every quarter of it)",
    D.reservationShareTtlMs,
    100,
    600000,
  ),
  'nats-url': valueFlag({
    arg: 'URL',
    help: 'NATS server of the load reports, e.g. nats://127.0.0.1:4222; unset: an in-process bus (one process only)',
    parse: natsUrl,
    default: D.natsUrl,
  }),
  'database-url': valueFlag({
    arg: 'URL',
    help: 'PostgreSQL holding thresholds and their audit log; unset: an embedded database under --data-dir',
    parse: postgresUrl,
    default: D.databaseUrl,
  }),
  'data-dir': valueFlag({
    arg: 'DIR',
    help: 'directory of the embedded database (without --database-url)',
    parse: nonEmpty,
    default: D.dataDir,
  }),
  'data-dir-wait-ms': int(
    'MS',
    'how long a start waits while another live process holds --data-dir, then exits 1 naming it',
    D.dataDirWaitMs,
    0,
  ),
  'admin-token': listFlag({
    arg: 'NAME:TOKEN',
    help: 'bearer token allowed to change thresholds; NAME is the audit actor',
  }),
  'admin-token-file': valueFlag({
    arg: 'FILE',
    help: 'a file of NAME:TOKEN lines (# comments), read at start beside --admin-token',
    parse: (raw) => raw,
    default: undefined,
  }),
  'admin-allow-loopback': switchFlag({
    help: 'without --admin-token, accept threshold writes from loopback clients (npm start gives it)',
    default: false,
  }),
  'engine-target': listFlag({
    arg: 'ENGINE=[NAME=]URL',
    help: 'an engine scraped by the in-process bridge; ENGINE is vllm, sglang, llamacpp or tgi',
    parse: parseEngineTarget,
  }),
  'llamacpp-kv-cache': valueFlag({
    arg: LLAMACPP_KV_CACHES.join('|'),
    help: 'llama.cpp engine targets: each slot owns a context window (-np N), or the slots share one cache (--kv-unified)',
    parse: oneOf<LlamacppKvCache>(LLAMACPP_KV_CACHES),
    default: D.llamacppKvCache,
  }),
  'threshold-resync-ms': int(
    'MS',
    'period of the full reload of stored thresholds, beside change notifications',
    D.thresholdResyncMs,
    100,
  ),
  'log-level': valueFlag({
    arg: 'debug|info|warn|error',
    help: 'least severe level logged',
    parse: oneOf<LogLevel>(['debug', 'info', 'warn', 'error']),
    default: D.logLevel,
  }),
  'access-log': valueFlag({
    arg: 'true|false',
    help: 'one log line per request (method, URL, status, request id; never bodies or credentials)',
    parse: (raw) => oneOf(['true', 'false'])(raw) === 'true',
    default: D.accessLog,
  }),
  'shutdown-timeout-ms': int(
    'MS',
    'on SIGTERM or SIGINT, how long requests in flight may take to finish',
    D.shutdownTimeoutMs,
    0,
  ),
  'max-inflight-per-key': valueFlag({
    arg: 'N',
    help: 'enables the bundled example policy: at most N requests in flight per API key (429 beyond)',
    parse: integerIn(1),
    default: D.maxInflightPerKey,
  }),
  'tenant-header': valueFlag({
    arg: 'NAME',
    help: 'header naming the tenant of a request that carries no tenant key (set by a trusted gateway)',
    parse: (raw) => matching(/^[A-Za-z0-9-]+$/, 'a header name')(nonEmpty(raw)).toLowerCase(),
    default: D.tenantHeader,
  }),
  'require-tenant': switchFlag({
    help: 'answer 401 invalid_api_key to a request whose bearer key matches no tenant',
    default: false,
  }),
  'status-page-tenants': switchFlag({
    help: "list the tenants' usage, shares and limits on the status page, which needs no token",
    default: false,
  }),
  'tenant-sync-ms': int(
    'MS',
    'how often a replica sends its tenant consumption to the others (over NATS)',
    D.tenantSyncMs,
    10,
    60000,
  ),
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
    help: 'a file of CLASS:API_KEY lines: the highest priority class each API key may use',
    parse: nonEmpty,
    default: undefined,
  }),
  namespace: valueFlag({
    arg: 'NS',
    help: 'NATS subject namespace',
    parse: (raw) => matching(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ or -')(nonEmpty(raw)),
    default: D.namespace,
  }),
  'max-workers': int(
    'N',
    'workers tracked at most; reports from more are refused and counted',
    D.maxWorkers,
    1,
  ),
  'max-tracked-ranks': int(
    'N',
    'data-parallel ranks tracked at most over all workers; reports beyond are refused and counted',
    D.maxTrackedRanks,
    1,
  ),
  'upstream-timeout-ms': int(
    'MS',
    'a worker that sends nothing for this long is answered 504',
    D.upstreamTimeoutMs,
    1,
  ),
  'body-limit-bytes': int(
    'N',
    'largest request body in bytes; larger ones get 413',
    D.bodyLimitBytes,
    1024,
  ),
  'idle-timeout-ms': int(
    'MS',
    'a connection with no request started for this long is closed',
    D.idleTimeoutMs,
    1,
  ),
  'max-upstream-body-bytes': int(
    'N',
    'largest non-streamed worker answer read, in bytes; beyond it the client gets 502',
    D.maxUpstreamBodyBytes,
    1024,
  ),
  'upstream-retries': int(
    'N',
    'other workers a request is sent to when its worker refused the connection, cut it or answered 5xx before any byte reached the client',
    D.upstreamRetries,
    0,
    16,
  ),
  'max-model-len': valueFlag({
    arg: 'N',
    help: "the models' context length in tokens: a request with max_tokens above it gets 400 (unset: the engine answers)",
    parse: integerIn(1, Number.MAX_SAFE_INTEGER),
    default: D.maxModelLen,
  }),
  'eject-after': int(
    'N',
    'requests of a worker failing in a row (refused or cut connection, 5xx) that take it out of routing for a backoff, then one probe request; 0 = never',
    D.ejectAfter,
    0,
    1000,
  ),
  'eject-backoff-ms': int(
    'MS',
    'how long a worker is first taken out of routing; doubled on each ejection in a row',
    D.ejectBackoffMs,
    1,
  ),
  'eject-backoff-max-ms': int(
    'MS',
    'longest a worker is taken out of routing at once',
    D.ejectBackoffMaxMs,
    1,
  ),
  'max-connections': valueFlag({
    arg: 'N',
    help: 'open client connections at most; past it a new one is closed at once and counted (default: the file limit minus a margin)',
    parse: integerIn(1),
    default: D.maxConnections,
  }),
};

/** `--retry-after-secs`: whole seconds, or `auto` (measured, docs/operations.md#rolling-out-shedding). */
function secondsOrAuto(raw: string): number | 'auto' {
  if (raw === 'auto') return raw;
  try {
    return integerIn(0)(raw);
  } catch {
    throw new InvalidFlagValue('expected an integer >= 0, or auto');
  }
}

/** `ENGINE=[NAME=]URL`: an engine the in-process bridge scrapes (docs/engines.md). */
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
    throw new InvalidFlagValue(err.message);
  }
  return { engine: engine as EngineName, spec };
}
