import { RankLoad } from './busy-rule';
import { judgedLoad, RankReservations, ReservationLedger } from './reservations';

export interface RankState extends RankLoad {
  busy: boolean;
  /**
   * False when the rank's reports carry no `active_prefill_tokens`: `activePrefillTokens` then
   * holds this frontend's own count of prompt tokens sent and not yet answered (contract §4).
   */
  prefillReported: boolean;
  /** The newest report's `seq`, to refuse older ones from the same publisher. */
  seq: number | undefined;
  /** What this frontend sent the worker since this rank's newest report was measured. */
  readonly reserved: RankReservations;
}

/** One live worker as this frontend sees it: reported load per rank plus its own traffic. */
export class WorkerEntry {
  /**
   * The ranks that have reported, by dp_rank: sized by what was reported, not by `dpSize` (a
   * report may claim 1024 ranks and send one). Ranks not in the map have not reported.
   */
  readonly ranks = new Map<number, RankState>();
  busyRanks = 0;
  busy = false;
  lastSeenMs: number;
  /** Prompt tokens this frontend sent to the worker that have not produced a first token yet. */
  pendingPrefillTokens = 0;
  /** Requests sent since the ranks' newest reports were measured (reservations.ts). */
  readonly reservations = new ReservationLedger();
  /** When the newest report was measured (its `timestamp_ms`, else when it arrived). */
  lastReportMs: number;
  /** Who publishes the worker's reports (their optional `source`), for the status page. */
  source: string | undefined;
  /** Position in the model's free list, -1 while busy; keeps add/remove O(1). */
  freeIndex = -1;

  constructor(
    readonly id: string,
    readonly model: string,
    readonly endpoint: string,
    readonly dpSize: number,
    nowMs: number,
  ) {
    this.lastSeenMs = nowMs;
    this.lastReportMs = nowMs;
  }

  /** Prompt-token budget of one scheduler step summed over ranks, if the worker reports it. */
  batchedTokenBudget(): number | undefined {
    if (this.ranks.size < this.dpSize) return undefined;
    let total = 0;
    for (const rank of this.ranks.values()) {
      if (rank.maxNumBatchedTokens === undefined) return undefined;
      total += rank.maxNumBatchedTokens;
    }
    return total;
  }

  /**
   * Prompt tokens ahead of a new request on the rank it lands on, as admission judges them: the
   * mean over the reported ranks of their prefill load (reported, or this frontend's own count)
   * plus their share of the reservations. 0 until a rank reports.
   */
  prefillTokensAhead(): number {
    if (this.ranks.size === 0) return 0;
    let total = 0;
    for (const rank of this.ranks.values()) {
      total += judgedLoad(rank, this.dpSize).activePrefillTokens;
    }
    return total / this.ranks.size;
  }

  /** Mean KV usage over reported ranks (0..1), used by the least-loaded router. */
  kvUsage(): number {
    let used = 0;
    let total = 0;
    for (const rank of this.ranks.values()) {
      used += rank.activeDecodeBlocks;
      total += rank.kvTotalBlocks;
    }
    return total > 0 ? used / total : 0;
  }
}

/** The workers of one model, with the free (not busy) ones kept in a dense array. */
export class ModelEntry {
  readonly workers = new Map<string, WorkerEntry>();
  readonly free: WorkerEntry[] = [];

  constructor(readonly name: string) {}

  get allBusy(): boolean {
    return this.workers.size > 0 && this.free.length === 0;
  }

  markFree(worker: WorkerEntry): void {
    if (worker.freeIndex !== -1) return;
    worker.freeIndex = this.free.length;
    this.free.push(worker);
  }

  markBusy(worker: WorkerEntry): void {
    const i = worker.freeIndex;
    if (i === -1) return;
    const last = this.free.pop() as WorkerEntry;
    if (last !== worker) {
      this.free[i] = last;
      last.freeIndex = i;
    }
    worker.freeIndex = -1;
  }
}
