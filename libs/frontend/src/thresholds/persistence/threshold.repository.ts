import { BusyThresholds } from '../busy-thresholds';
import { WireThresholdValues } from '../threshold-wire';

/** A model's stored per-model thresholds; `null` = no per-model value (the global flag applies). */
export type ThresholdValues = BusyThresholds;

/** An absent key leaves the stored value unchanged; `null` clears it. */
export type ThresholdPatch = { -readonly [K in keyof ThresholdValues]?: ThresholdValues[K] };

/** Who made a change and from where; written to the audit row. */
export interface AuditMeta {
  actor: string;
  source: string;
  requestId: string | null;
}

/** The snake_case keys of contract §3.2, `null` where no value is stored. */
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
}

export interface AppliedChange {
  before: ThresholdValues;
  after: ThresholdValues;
  audit: AuditEntry;
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

/** The port: services depend on this abstract class (a DI token), never on TypeORM. */
export abstract class ThresholdRepository {
  /** Every model with at least one stored (non-null) value. */
  abstract loadAll(): Promise<Map<string, ThresholdValues>>;

  abstract load(model: string): Promise<ThresholdValues | undefined>;

  /**
   * One transaction: lock the model's row (insert-if-missing then SELECT ... FOR UPDATE),
   * compute after = before merged with patch, write it, insert one audit row. All or nothing;
   * a lost answer to the COMMIT itself is a `ChangeOutcomeUnknownError`.
   */
  abstract applyChange(
    model: string,
    patch: ThresholdPatch,
    meta: AuditMeta,
  ): Promise<AppliedChange>;

  /**
   * Newest first; `before` is the cursor returned as `next` by the previous page (the id of the
   * last entry returned), null when there are no more entries.
   */
  abstract listAudit(query: AuditQuery): Promise<AuditPage>;

  /** Cheap liveness query (SELECT 1) for health checks. */
  abstract ping(): Promise<void>;
}
