import { PRIORITY_CLASSES, PriorityClass } from '../metrics/metric-names';

/** One bucket per 5 s, 120 of them: the last 10 minutes of each model, for the status page. */
export const HISTORY_BUCKET_MS = 5000;
export const HISTORY_BUCKETS = 120;
/**
 * Models with a history at most. The status page lists 100; beyond this, models that appear
 * later get none, so reports naming invented models cannot grow memory (a few KB a model).
 */
export const MAX_HISTORY_MODELS = 256;
/** A history made just before a bucket ends: its first rates are over at least this much time. */
const MIN_SPAN_MS = 1000;

// The cells of one bucket.
const ADMITTED = 0;
const REJECTED: Record<PriorityClass, number> = { critical: 1, standard: 2, sheddable: 3 };
const BUSY_SUM = 4;
const BUSY_SAMPLES = 5;
const KV_SUM = 6;
const KV_SAMPLES = 7;
const CELLS = 8;
/** The window's buckets and the one filling. */
const SLOTS = HISTORY_BUCKETS + 1;

const bucketOf = (ms: number): number => Math.floor(ms / HISTORY_BUCKET_MS);

/** One model's buckets in one flat array, indexed by (absolute bucket number mod slots). */
class Ring {
  readonly cells = new Float64Array(SLOTS * CELLS);
  /** The newest bucket, as `floor(ms / HISTORY_BUCKET_MS)`. */
  head: number;
  /** The newest bucket in which something was recorded or sampled. */
  lastActive: number;

  constructor(readonly createdMs: number) {
    this.head = bucketOf(createdMs);
    this.lastActive = this.head;
  }

  /**
   * Where the bucket of `nowMs` starts in `cells`, after zeroing the buckets skipped since the
   * last write. A clock that stepped back writes into the newest bucket.
   */
  at(nowMs: number): number {
    const bucket = bucketOf(nowMs);
    if (bucket > this.head) {
      const skipped = Math.min(bucket - this.head, SLOTS);
      for (let b = this.head + 1; b <= this.head + skipped; b++) {
        const start = (b % SLOTS) * CELLS;
        this.cells.fill(0, start, start + CELLS);
      }
      this.head = bucket;
    }
    return (this.head % SLOTS) * CELLS;
  }
}

/**
 * A model's last 10 minutes, oldest bucket first, complete buckets only (the one still filling
 * would show every rate dipping at each bucket's start).
 */
export interface HistoryWindow {
  /** When each bucket ends. */
  readonly endsMs: number[];
  /** Requests sent to a worker, per second. */
  readonly admitted: number[];
  /** Overload rejections per second, by priority class. */
  readonly rejected: Record<PriorityClass, number[]>;
  /** Mean share (0..1) of the model's live workers that were busy; null if never sampled. */
  readonly busyShare: (number | null)[];
  /** Mean over the model's reported ranks of active_decode_blocks / kv_total_blocks. */
  readonly kvUsage: (number | null)[];
}

/**
 * Per model, a ring of 5-second buckets: admitted requests and rejections counted as they
 * happen (a map lookup and an increment: nothing on the request path grows or scans), and the
 * busy share and KV usage sampled from the worker registry. Rings are made only by `sample`,
 * i.e. for models the registry knows; counts for a model without one are dropped.
 */
export class TrafficHistory {
  private readonly rings = new Map<string, Ring>();

  constructor(private readonly now: () => number = Date.now) {}

  admitted(model: string): void {
    const ring = this.rings.get(model);
    if (ring) ring.cells[this.slot(ring, this.now()) + ADMITTED]++;
  }

  rejected(model: string, priority: PriorityClass): void {
    const ring = this.rings.get(model);
    if (ring) ring.cells[this.slot(ring, this.now()) + REJECTED[priority]]++;
  }

  /** Adds one sample of the model's load; `kvUsage` null when no rank reports its KV size. */
  sample(model: string, busyShare: number, kvUsage: number | null): void {
    const nowMs = this.now();
    let ring = this.rings.get(model);
    if (!ring) {
      if (this.rings.size >= MAX_HISTORY_MODELS) return;
      ring = new Ring(nowMs);
      this.rings.set(model, ring);
    }
    const at = this.slot(ring, nowMs);
    ring.cells[at + BUSY_SUM] += busyShare;
    ring.cells[at + BUSY_SAMPLES]++;
    if (kvUsage === null) return;
    ring.cells[at + KV_SUM] += kvUsage;
    ring.cells[at + KV_SAMPLES]++;
  }

  forget(model: string): void {
    this.rings.delete(model);
  }

  /** Drops the rings with nothing recorded in the window (their model has no live worker). */
  dropIdle(): void {
    const bucket = bucketOf(this.now());
    for (const [model, ring] of this.rings) {
      if (bucket - ring.lastActive > HISTORY_BUCKETS) this.rings.delete(model);
    }
  }

  models(): string[] {
    return [...this.rings.keys()];
  }

  window(model: string): HistoryWindow | undefined {
    const ring = this.rings.get(model);
    if (!ring) return undefined;
    const nowMs = this.now();
    ring.at(nowMs);
    // The newest bucket (the one of now, unless the clock stepped back) is still filling.
    const first = Math.max(bucketOf(ring.createdMs), ring.head - HISTORY_BUCKETS);
    const out = emptyWindow();
    for (let b = first; b < ring.head; b++) {
      const at = (b % SLOTS) * CELLS;
      const c = ring.cells;
      const end = (b + 1) * HISTORY_BUCKET_MS;
      const seconds =
        Math.max(end - Math.max(end - HISTORY_BUCKET_MS, ring.createdMs), MIN_SPAN_MS) / 1000;
      out.endsMs.push(end);
      out.admitted.push(c[at + ADMITTED] / seconds);
      for (const p of PRIORITY_CLASSES) out.rejected[p].push(c[at + REJECTED[p]] / seconds);
      out.busyShare.push(c[at + BUSY_SAMPLES] > 0 ? c[at + BUSY_SUM] / c[at + BUSY_SAMPLES] : null);
      out.kvUsage.push(c[at + KV_SAMPLES] > 0 ? c[at + KV_SUM] / c[at + KV_SAMPLES] : null);
    }
    return out;
  }

  /** Where to write in `ring` now; the ring counts as active. */
  private slot(ring: Ring, nowMs: number): number {
    const at = ring.at(nowMs);
    ring.lastActive = ring.head;
    return at;
  }
}

function emptyWindow(): HistoryWindow {
  return {
    endsMs: [],
    admitted: [],
    rejected: { critical: [], standard: [], sheddable: [] },
    busyShare: [],
    kvUsage: [],
  };
}
