import type { EngineName, LlamacppKvCache } from '@sluice/bridge';

import { DEFAULT_PRIORITY_FACTORS, DEFAULT_PRIORITY_HEADER, PriorityFactors } from './priority';
import { PriorityKey } from './priority-keys';
import { AdmissionControl, NO_THRESHOLDS, ThresholdValues } from './threshold-keys';

export type { AdmissionControl } from './threshold-keys';
export type RouterMode = 'round-robin' | 'random' | 'least-loaded';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * The global default of each per-model key (`null` = unset); see threshold-keys.ts. Its
 * `admissionControl` is always the config's `admissionControl`.
 */
export type GlobalThresholds = ThresholdValues;

/** An engine the in-process bridge scrapes: `--engine-target ENGINE=[NAME=]URL`. */
export interface EngineTarget {
  readonly engine: EngineName;
  /** `[NAME=]URL`, already checked. */
  readonly spec: string;
}

/** A bearer token allowed to change thresholds; `name` is the audit actor. */
export interface AdminToken {
  readonly name: string;
  readonly token: string;
}

/** The frontend's validated configuration (docs/configuration.md); injected by class token. */
export class FrontendConfig {
  readonly httpHost: string = '0.0.0.0';
  readonly httpPort: number = 8000;
  /** The global admission mode; a model's own (`admission_control`) overrides it. */
  readonly admissionControl: AdmissionControl = 'none';
  readonly thresholds: GlobalThresholds = NO_THRESHOLDS;
  readonly routerMode: RouterMode = 'round-robin';
  /**
   * Share of would-be TTFT-objective refusals admitted anyway, to measure how many refusals were
   * wrong (`sluice_frontend_slo_sample_total`); 0 = none.
   */
  readonly ttftSloSample: number = 0;
  /**
   * At most one would-be TTFT-objective refusal per worker per this long is explored (sent to
   * check a prediction over the objective) instead of refused (docs/architecture.md).
   */
  readonly exploreIntervalMs: number = 1000;
  readonly routerQueueThreshold: number | null = null;
  readonly routerQueueMaxDepth: number = 1024;
  readonly routerQueueTimeoutMs: number = 30000;
  /** `Retry-After` of rejections in seconds (0: none), or `auto`: measured per model. */
  readonly retryAfterSecs: number | 'auto' = 1;
  /** A busy rank turns free only when every term is at most threshold × this (0 < F ≤ 1). */
  readonly busyReleaseFactor: number = 1;
  /** A rank keeps a new busy or free state at least this long. */
  readonly busyMinDwellMs: number = 0;
  readonly workerTtlMs: number = 10000;
  /**
   * Replicas share their reservations between reports over NATS, coalesced over this long
   * (docs/decisions/0182-replicas-share-reservations.md); 0: not shared.
   */
  readonly reservationShareIntervalMs: number = 5;
  /** Another replica's shared reservations count until this long after its last message. */
  readonly reservationShareTtlMs: number = 2000;
  readonly natsUrl: string | null = null;
  /** PostgreSQL URL; null = the embedded database under `dataDir`. */
  readonly databaseUrl: string | null = null;
  readonly dataDir: string = './data';
  /** How long a start waits for another live process's lock on `dataDir`, then exits 1. */
  readonly dataDirWaitMs: number = 10000;
  readonly adminTokens: readonly AdminToken[] = [];
  /**
   * Without admin tokens, accept threshold writes from loopback clients (`npm start` gives it);
   * off, every write is refused. A same-host proxy makes every client a loopback one.
   */
  readonly adminAllowLoopback: boolean = false;
  /** Engines scraped by the in-process bridge; empty: none. */
  readonly engineTargets: readonly EngineTarget[] = [];
  /** How the llama.cpp engine targets hold their KV cache (docs/engines.md). */
  readonly llamacppKvCache: LlamacppKvCache = 'per-slot';
  /** Safety-net reload of every stored threshold, beside the NATS change notifications. */
  readonly thresholdResyncMs: number = 5000;
  readonly logLevel: LogLevel = 'info';
  /** One JSON line per request (off by default: at tens of thousands of 503/s it costs). */
  readonly accessLog: boolean = false;
  /** How long a shutdown waits for in-flight requests before closing anyway. */
  readonly shutdownTimeoutMs: number = 30000;
  /**
   * Header naming the tenant of a request without a tenant's key, set by a gateway in front that
   * has authenticated the caller (lower case); null: not read (docs/api.md#tenants).
   */
  readonly tenantHeader: string | null = null;
  /** A request whose bearer key matches no tenant's key is answered 401. */
  readonly requireTenant: boolean = false;
  /**
   * The status page (open to anyone who reaches it) lists the tenants; off, it lists none, as
   * their usage is per customer and `/tenants` needs the admin token (decision 0210).
   */
  readonly statusPageTenants: boolean = false;
  /** How often a replica sends its tenant consumption to the others (docs/api.md#tenants). */
  readonly tenantSyncMs: number = 250;
  /** The bundled example policy: cap on requests in flight per API key (null = off). */
  readonly maxInflightPerKey: number | null = null;
  /** The header a request's priority class is read from (lower case); null: everyone standard. */
  readonly priorityHeader: string | null = DEFAULT_PRIORITY_HEADER;
  /** What sheddable and critical requests' thresholds are multiplied by (docs/security.md#priority-classes-who-may-set-x-sluice-priority). */
  readonly priorityFactors: PriorityFactors = DEFAULT_PRIORITY_FACTORS;
  /** The bundled policy capping each API key's class (`--priority-key-file`); null = off. */
  readonly priorityKeys: readonly PriorityKey[] | null = null;
  readonly namespace: string = 'dynamo';
  /** Upper bound on tracked workers, so hostile reports cannot exhaust memory. */
  readonly maxWorkers: number = 100000;
  /**
   * Upper bound on data-parallel ranks stored over all workers: what a report costs in memory
   * is a rank, and one worker may claim up to 1024 of them.
   */
  readonly maxTrackedRanks: number = 262144;
  readonly upstreamTimeoutMs: number = 600000;
  readonly bodyLimitBytes: number = 16 * 1024 * 1024;
  /** A connection with no request started for this long is closed (also the keep-alive idle). */
  readonly idleTimeoutMs: number = 60000;
  /** A worker's answer or error body read beyond this is refused with a 502. */
  readonly maxUpstreamBodyBytes: number = 64 * 1024 * 1024;
  /**
   * Other workers a request is sent to when its worker refused the connection, cut it or
   * answered 5xx before any byte reached the client (docs/decisions/0135-upstream-retries.md).
   */
  readonly upstreamRetries: number = 1;
  /**
   * Requests of a worker failing in a row (connect, reset, 5xx) that take it out of routing
   * (docs/decisions/0170-outlier-ejection.md); 0 = never.
   */
  readonly ejectAfter: number = 5;
  /** First ejection's length; doubled on each ejection in a row, up to the max. */
  readonly ejectBackoffMs: number = 5000;
  readonly ejectBackoffMaxMs: number = 60000;
  /**
   * Open client connections at most; past it a new one is closed at once and counted. null = the
   * process's file limit minus a margin (`http/connection-cap.ts`).
   */
  readonly maxConnections: number | null = null;
  /**
   * The models' context length in tokens: a request asking for more output (`max_tokens`,
   * `max_completion_tokens`) is answered 400 before admission, as vLLM does. null = not known
   * here; the engine's own 400 then reaches the client.
   */
  readonly maxModelLen: number | null = null;

  /**
   * Thresholds left out of `values.thresholds` are unset. The global admission mode may be given
   * as `admissionControl` (which wins) or as `thresholds.admissionControl`; both then hold it.
   */
  constructor(values: FrontendConfigValues = {}) {
    Object.assign(this, values);
    const admissionControl =
      values.admissionControl ?? values.thresholds?.admissionControl ?? this.admissionControl;
    this.admissionControl = admissionControl;
    this.thresholds = { ...NO_THRESHOLDS, ...values.thresholds, admissionControl };
  }
}

export type FrontendConfigValues = Partial<Omit<FrontendConfig, 'thresholds'>> & {
  thresholds?: Partial<GlobalThresholds>;
};
