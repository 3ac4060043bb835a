import { BusyThresholds } from '../busy-thresholds';
import { WireThresholdValues } from '../threshold-wire';

/** A model's stored per-model thresholds; `null` = no per-model value (the global flag applies). */
export type ThresholdValues = BusyThresholds;

/** An absent key leaves the stored value unchanged; `null` clears it. */
export type ThresholdPatch = { -readonly [K in keyof ThresholdValues]?: ThresholdValues[K] };

/** Who made a change, from where and why; written to the audit row. */
export interface AuditMeta {
  actor: string;
  source: string;
  requestId: string | null;
  /** The caller's words (at most 512 characters); absent or null: none given. */
  reason?: string | null;
}

/** The snake_case keys of docs/api.md#busy-thresholds, `null` where no value is stored. */
export type WireThresholds = WireThresholdValues;

export interface AuditEntry {
  /** bigserial id as a decimal string; also the pagination cursor. */
  id: string;
  /** ISO-8601. */
  at: string;
  actor: string;
  model: string;
  before: WireThresholds;
  after: WireThresholds;
  source: string;
  requestId: string | null;
  reason: string | null;
  /** ISO-8601: when a temporary change was due to revert (as asked); null for a lasting one. */
  expiresAt: string | null;
}

export interface AppliedChange {
  before: ThresholdValues;
  after: ThresholdValues;
  /** Its id is the model's new version. */
  audit: AuditEntry;
}

/** A temporary change that reached its expiry, undone by `revertDue`. */
export interface RevertedChange extends AppliedChange {
  model: string;
}

/** The version of a model that was never changed. */
export const NO_VERSION = '0';

/**
 * What the store holds for one model: its per-model values and its version, the id of the audit
 * row of its newest change (`NO_VERSION` if none). Every stored change, whoever made it, gives a
 * new, larger version.
 */
export interface StoredState {
  values: ThresholdValues;
  version: string;
}

/**
 * `If-Match` as the store checks it: the model's version is one of `versions`, or, with `any`
 * (`If-Match: *`), the model was changed before.
 */
export type VersionCondition = { readonly any: true } | { readonly versions: readonly string[] };

export function satisfies(condition: VersionCondition, version: string): boolean {
  return 'any' in condition ? version !== NO_VERSION : condition.versions.includes(version);
}

export interface ChangeOptions {
  /** Apply only if the model's version satisfies this, checked under the row lock. */
  ifMatch?: VersionCondition;
  /** The keys the change sets return to their previous values after this many seconds. */
  ttlSecs?: number;
}

export interface AuditQuery {
  model?: string;
  /** Page size, an integer ≥ 1. */
  limit: number;
  /** The `next` of the previous page: only entries with a smaller id. */
  before?: string;
}

export interface AuditPage {
  entries: AuditEntry[];
  next: string | null;
}

/** Thrown by `listAudit` for a `limit` or `before` the caller should have rejected as a 400. */
export class InvalidAuditQueryError extends Error {
  override readonly name = 'InvalidAuditQueryError';
}

/**
 * Thrown by `applyChange` when the database took the COMMIT but its answer never came back (the
 * connection broke or the query deadline passed while waiting): the change may or may not be
 * stored. Every other failure of `applyChange` means nothing was stored.
 */
export class ChangeOutcomeUnknownError extends Error {
  override readonly name = 'ChangeOutcomeUnknownError';

  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** Thrown by `applyChange` when `ifMatch` does not hold: nothing was changed. */
export class VersionMismatchError extends Error {
  override readonly name = 'VersionMismatchError';

  constructor(
    readonly model: string,
    readonly current: StoredState,
  ) {
    super(`the version of '${model}' is ${current.version}`);
  }
}

/** The port: services depend on this abstract class (a DI token), never on TypeORM. */
export abstract class ThresholdRepository {
  /** Every model with at least one stored (non-null) value. */
  abstract loadAll(): Promise<Map<string, ThresholdValues>>;

  abstract load(model: string): Promise<ThresholdValues | undefined>;

  /** Every model the store has a row for, with its version (values all null included). */
  abstract loadStates(): Promise<Map<string, StoredState>>;

  /** `undefined` when the store has no row for the model. */
  abstract loadState(model: string): Promise<StoredState | undefined>;

  /**
   * One transaction: lock the model's row (insert-if-missing then SELECT ... FOR UPDATE), check
   * `ifMatch` (`VersionMismatchError`), compute after = before merged with patch, insert one
   * audit row, write the values, the new version and the pending reverts (`ttlSecs`). All or
   * nothing; a lost answer to the COMMIT itself is a `ChangeOutcomeUnknownError`.
   */
  abstract applyChange(
    model: string,
    patch: ThresholdPatch,
    meta: AuditMeta,
    options?: ChangeOptions,
  ): Promise<AppliedChange>;

  /**
   * Claims one model whose pending revert is due (skipping rows another replica holds) and
   * reverts its due keys in one transaction, audited as actor `system`, source `ttl-expiry`.
   * `null` when nothing is due; so exactly one replica reverts each expiry.
   */
  abstract revertDue(): Promise<RevertedChange | null>;

  /**
   * Newest first; `before` is the cursor returned as `next` by the previous page (the id of the
   * last entry returned), null when there are no more entries.
   */
  abstract listAudit(query: AuditQuery): Promise<AuditPage>;

  /** Cheap liveness query (SELECT 1) for health checks. */
  abstract ping(): Promise<void>;
}
