import { PerClass, perClass, PriorityClass } from '../config/priority';
import { RankLoad } from './busy-rule';
import type { Published } from './report-publishers';
import {
  judgedDecodeBlocks,
  judgedLoad,
  PeerReservations,
  RankReservations,
  ReservationLedger,
} from './reservations';

export interface RankState extends RankLoad {
  /**
   * Busy for each priority class (docs/security.md#priority-classes-who-may-set-x-sluice-priority): judged with that class's thresholds.
   * `busyFor.standard` is the busy state of docs/architecture.md#busy-rule.
   */
  busyFor: PerClass<boolean>;
  /**
   * False when the rank's reports carry no `active_prefill_tokens`: `activePrefillTokens` then
   * holds this frontend's own count of prompt tokens sent and not yet answered (docs/api.md#nats-subjects).
   */
  prefillReported: boolean;
  /** The newest report's `seq`, to refuse older ones from the same publisher. */
  seq: number | undefined;
  /** Who published the report the state holds (its `source`; `''` without one). */
  publisher: string;
  /** When that report arrived (`Date.now()`). */
  receivedMs: number;
  /**
   * While two or more publishers report the rank within the worker TTL: each one's latest
   * report, the oldest heard first (report-publishers.ts); undefined otherwise.
   */
  rivals: Map<string, Published> | undefined;
  /**
   * Per class, until when the rank keeps its busy state for the class whatever its load
   * (`--busy-min-dwell-ms` after its last flip); 0 when no dwell is configured.
   */
  heldUntil: PerClass<number>;
  /** What this frontend sent the worker since this rank's newest report was measured. */
  readonly reserved: RankReservations;
  /** What the other replicas say they sent it since (`WorkerEntry.peerShares`, summed). */
  readonly peers: PeerReservations;
}

/** A worker's state for one priority class. */
export interface WorkerClassState {
  /** Ranks busy for the class. */
  busyRanks: number;
  /** Every rank 0..dp_size-1 busy for the class: the router sends it none of the class's requests. */
  busy: boolean;
  /** Position in the model's free list of the class, -1 while busy; keeps add/remove O(1). */
  freeIndex: number;
}

/** One live worker as this frontend sees it: reported load per rank plus its own traffic. */
export class WorkerEntry {
  /**
   * The ranks that have reported, by dp_rank: sized by what was reported, not by `dpSize` (a
   * report may claim 1024 ranks and send one). Ranks not in the map have not reported.
   */
  readonly ranks = new Map<number, RankState>();
  /** Busy state per priority class; written by the registry only. */
  readonly classes: PerClass<WorkerClassState> = perClass(() => ({
    busyRanks: 0,
    busy: false,
    freeIndex: -1,
  }));
  lastSeenMs: number;
  /** Prompt tokens this frontend sent to the worker that have not produced a first token yet. */
  pendingPrefillTokens = 0;
  /** Requests sent since the ranks' newest reports were measured (reservations.ts). */
  readonly reservations = new ReservationLedger();
  /**
   * The other replicas' reservations on the worker, by replica, each by dp_rank, as their newest
   * `reservations` message gave them (reservation-share.ts).
   */
  readonly peerShares = new Map<string, ReadonlyMap<number, PeerReservations>>();
  /** When the newest report was measured (its `timestamp_ms`, else when it arrived). */
  lastReportMs: number;
  /** Who publishes the worker's reports (their optional `source`), for the status page. */
  source: string | undefined;
  /** Tokens one KV block holds, when the newest report says (its `kv_block_size`). */
  kvBlockSize: number | undefined;
  /**
   * False while outlier ejection holds the worker out of routing (`OutlierEjection`): it is in no
   * free list, and its load does not count for the 503 decision. Written by the registry only.
   */
  inRouting = true;
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

  /** Busy for standard requests: the busy state of docs/architecture.md#busy-rule (gauges, logs, status page). */
  get busy(): boolean {
    return this.classes.standard.busy;
  }

  /** Busy for requests of this class. */
  busyFor(c: PriorityClass): boolean {
    return this.classes[c].busy;
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

  /**
   * KV usage of the rank a new request lands on, as admission judges it (0..1): the mean over
   * the reported ranks of their reported decode blocks plus their share of the reserved ones,
   * over their KV blocks, at most 1 each (a rank reporting no KV blocks counts 0). What the TTFT
   * model's k sees; O(1) per rank and allocation-free, as prefillTokensAhead.
   */
  judgedKvUsage(): number {
    if (this.ranks.size === 0) return 0;
    let total = 0;
    for (const rank of this.ranks.values()) {
      if (rank.kvTotalBlocks <= 0) continue;
      const used = judgedDecodeBlocks(rank, this.dpSize);
      total += Math.min(1, Math.max(0, used / rank.kvTotalBlocks));
    }
    return total / this.ranks.size;
  }

  /**
   * Whether a request of `blocks` KV blocks sent now must wait in the engine's queue: a queue is
   * there already (reported or reserved), or no rank has room for its share of the blocks (a
   * llama.cpp slot is one block: every slot taken). A rank that reports no KV blocks says
   * nothing of its room: the request counts as waiting, the safe side.
   */
  hasNoRoomFor(blocks: number): boolean {
    const loads = [...this.ranks.values()].map((rank) => ({
      rank,
      load: judgedLoad(rank, this.dpSize),
    }));
    if (loads.some(({ load }) => (load.numRequestsWaiting ?? 0) > 0)) return true;
    return !loads.some(
      ({ rank, load }) =>
        rank.kvTotalBlocks > 0 &&
        load.activeDecodeBlocks + blocks / this.dpSize <= rank.kvTotalBlocks,
    );
  }

  /** The worker's whole KV cache: its ranks' blocks together (what caps one reservation). */
  totalKvBlocks(): number {
    let total = 0;
    for (const rank of this.ranks.values()) total += rank.kvTotalBlocks;
    return total;
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

/**
 * The workers of one model, with the free (not busy) ones of each priority class kept in a dense
 * array, so that "is any worker free for this class?" is a length check.
 */
export class ModelEntry {
  readonly workers = new Map<string, WorkerEntry>();
  readonly freeFor: PerClass<WorkerEntry[]> = perClass(() => []);
  /** Live workers in routing (not ejected): those the busy rule judges the model on. */
  routable = 0;

  constructor(readonly name: string) {}

  /** The workers free for standard requests (docs/architecture.md#busy-rule). */
  get free(): readonly WorkerEntry[] {
    return this.freeFor.standard;
  }

  /** Every live worker is busy for standard requests (docs/architecture.md#busy-rule). */
  get allBusy(): boolean {
    return this.allBusyFor('standard');
  }

  /**
   * Every live worker in routing is busy for requests of this class: they are refused. An
   * ejected worker's load does not count; with every worker ejected, none is busy (the router
   * answers that no worker is available).
   */
  allBusyFor(c: PriorityClass): boolean {
    return this.routable > 0 && this.freeFor[c].length === 0;
  }

  /** Puts a worker not busy for `c` in the class's free list; an ejected worker stays out. */
  markFree(worker: WorkerEntry, c: PriorityClass): void {
    const state = worker.classes[c];
    if (state.freeIndex !== -1 || !worker.inRouting) return;
    const free = this.freeFor[c];
    state.freeIndex = free.length;
    free.push(worker);
  }

  markBusy(worker: WorkerEntry, c: PriorityClass): void {
    const state = worker.classes[c];
    const i = state.freeIndex;
    if (i === -1) return;
    const free = this.freeFor[c];
    const last = free.pop() as WorkerEntry;
    if (last !== worker) {
      free[i] = last;
      last.classes[c].freeIndex = i;
    }
    state.freeIndex = -1;
  }
}
