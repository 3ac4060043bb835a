/**
 * Reservations between reports (issue 14): what this frontend has sent a worker since its
 * newest report was measured, which that report cannot show yet. A rank is judged on its report
 * plus its share of them, so a burst between two reports cannot overshoot the thresholds.
 */

import { RankLoad } from './busy-rule';
import { SinceReport } from './since-report';

/**
 * Tokens per KV block assumed when a request's blocks are reserved and the worker's reports do
 * not say (`kv_block_size`): vLLM's default block size (and the simulated worker's
 * `--block-size`). An engine with larger blocks is over-reserved until its next report, one
 * with smaller blocks under-reserved.
 */
export const KV_BLOCK_TOKENS = 16;

/**
 * KV blocks a request holds once running: its prompt and every token it may generate, in
 * blocks of `blockSize` tokens, and never more than `capBlocks` (the worker's whole KV cache:
 * no request holds more). A llama.cpp slot is one block of its context window, so a request
 * there reserves one slot. Always finite: one client's huge `max_tokens` must not make a worker
 * look full, let alone Infinity (which no release can take back).
 */
export function reservedBlocks(
  promptTokens: number,
  maxTokens: number,
  blockSize = KV_BLOCK_TOKENS,
  capBlocks = Number.MAX_SAFE_INTEGER,
): number {
  const blocks = Math.ceil((promptTokens + maxTokens) / blockSize);
  const cap = Math.max(0, Math.floor(capBlocks));
  return Number.isFinite(blocks) && blocks >= 0 ? Math.min(blocks, cap) : cap;
}

/**
 * When a report was measured, for deciding which reservations it covers: its `timestamp_ms`
 * when that is sane, else the moment it arrived. Sane means not in the future (a publisher whose
 * clock runs ahead would otherwise cover requests sent after the report left it) and not older
 * than the worker TTL (a clock far behind would cover nothing, ever). Within those bounds a
 * clock behind ours only keeps reservations a little longer, which errs on the safe side.
 */
export function measuredAtMs(
  timestampMs: number | undefined,
  receivedMs: number,
  ttlMs: number,
): number {
  if (timestampMs === undefined || timestampMs > receivedMs || timestampMs < receivedMs - ttlMs) {
    return receivedMs;
  }
  return timestampMs;
}

/**
 * One rank's reservations: the totals of the worker's reservations that this rank's reports have
 * not covered yet. They are the worker's own totals, not yet split: the busy rule divides them by
 * dp_size, as it divides the frontend's pending prefill (docs/api.md#nats-subjects).
 */
export interface RankReservations {
  /** Prompt tokens of reserved requests still waiting for their first token. */
  prefillTokens: number;
  /** KV blocks of reserved requests that have not ended. */
  decodeBlocks: number;
  /** Reserved requests still waiting for their first token. */
  waiting: number;
  /** Sequence number of the first reservation this rank's reports have not covered. */
  next: number;
  /** What the rank's newest report holds of this frontend's requests that is over since. */
  readonly since: SinceReport;
}

/**
 * What the other frontend replicas reserved on a rank (their totals, not yet split), as their
 * newest `reservations` messages say (docs/architecture.md#worker-monitor, decision 0182).
 */
export interface PeerReservations {
  decodeBlocks: number;
  prefillTokens: number;
  waiting: number;
}

export const noPeerReservations = (): PeerReservations => ({
  decodeBlocks: 0,
  prefillTokens: 0,
  waiting: 0,
});

/** A rank as the registry keeps it: its reported load, and what was sent to it since. */
export interface ReservingRank extends RankLoad {
  /** False when `activePrefillTokens` is already this frontend's own count (docs/api.md#nats-subjects). */
  readonly prefillReported: boolean;
  readonly reserved: RankReservations;
  /** The other replicas' reservations on the rank; absent: none (one replica). */
  readonly peers?: PeerReservations;
}

/**
 * KV blocks a rank is judged to hold: its report, less the blocks of requests that ended since,
 * plus its share of the reserved blocks.
 */
export function judgedDecodeBlocks(rank: ReservingRank, dpSize: number): number {
  const r = rank.reserved;
  const reserved = r.decodeBlocks + (rank.peers?.decodeBlocks ?? 0);
  return SinceReport.less(rank.activeDecodeBlocks, r.since.blocks, dpSize) + reserved / dpSize;
}

/**
 * The load the busy rule judges a rank on: its report plus its share (1/dp_size) of the
 * reservations its report does not cover, this replica's and the other replicas'. Prefill is added only where it was reported: where it
 * was not, it already is this frontend's count of every unanswered prompt. A rank that does not
 * report its waiting requests gets none added, so that threshold still never fires for it (docs/architecture.md#busy-rule).
 * The rank itself when nothing is reserved, so a frontend without traffic judges as before.
 */
export function judgedLoad(rank: ReservingRank, dpSize: number): RankLoad {
  const r = rank.reserved;
  const p = rank.peers;
  if (
    r.prefillTokens === 0 &&
    r.decodeBlocks === 0 &&
    r.waiting === 0 &&
    r.since.blocks === 0 &&
    r.since.waiting === 0 &&
    (p === undefined || (p.prefillTokens === 0 && p.decodeBlocks === 0 && p.waiting === 0))
  ) {
    return rank;
  }
  const prefill = r.prefillTokens + (p?.prefillTokens ?? 0);
  const waits = r.waiting + (p?.waiting ?? 0);
  const reported = rank.numRequestsWaiting;
  const waiting =
    reported === undefined ? undefined : SinceReport.less(reported, r.since.waiting, dpSize);
  return {
    activeDecodeBlocks: judgedDecodeBlocks(rank, dpSize),
    kvTotalBlocks: rank.kvTotalBlocks,
    activePrefillTokens: rank.activePrefillTokens + (rank.prefillReported ? prefill / dpSize : 0),
    maxNumBatchedTokens: rank.maxNumBatchedTokens,
    numRequestsWaiting: waiting === undefined ? undefined : waiting + waits / dpSize,
  };
}

/** The ranks of a worker, each with its reservations (the registry's `RankState`s). */
export type ReservingRanks = ReadonlyMap<number, { readonly reserved: RankReservations }>;

/** One request sent to the worker. */
export class Reservation {
  /**
   * No first token yet: its prompt is prefill load and, when it found no room, it counts as a
   * waiting request.
   */
  prefilling = true;
  /** The request has not ended: its KV blocks are held. */
  live = true;
  /** How many ranks' reports cover it. */
  passed = 0;

  constructor(
    readonly seq: number,
    readonly atMs: number,
    readonly promptTokens: number,
    readonly blocks: number,
    /**
     * From when a report can hold the request: when it was sent, or, for one awaiting the
     * worker's acceptance, when the worker answered its status line (Infinity until then).
     */
    public acceptedMs: number,
    /**
     * The worker had no room for it when it was sent (`WorkerRegistry.reserve`): it waits in the
     * engine's queue until its first token. One sent to a worker with room starts at once.
     */
    readonly waits = true,
  ) {}

  /**
   * Whether a report measured at `measuredAtMs` holds the request. A request the worker has not
   * accepted yet may still sit unread in its socket or its HTTP layer (a worker whose event loop
   * lags, an engine tokenising): a report measured meanwhile does not show it. One that ended
   * counts for nothing any more, so any later report may pass it.
   */
  coveredBy(measuredAtMs: number): boolean {
    return this.atMs <= measuredAtMs && (!this.live || this.acceptedMs <= measuredAtMs);
  }
}

/** Amortises dropping reservations from the front of the array. */
const COMPACT_AFTER = 64;

/**
 * The reservations of one worker, oldest first, with each rank's position in them. Sending a
 * request and its first token or end cost O(ranks) (every rank's share changes); a report
 * advances its rank past the reservations it covers, each passed once, so reports cost O(1)
 * amortised and nothing at all while the worker gets no traffic.
 */
export class ReservationLedger {
  private entries: Reservation[] = [];
  /** Index in `entries` of the oldest reservation kept. */
  private head = 0;
  /** Sequence number of the next reservation. */
  private nextSeq = 0;

  /** Reservations kept (live or not yet passed by every rank), for tests and the status page. */
  get size(): number {
    return this.entries.length - this.head;
  }

  private get headSeq(): number {
    return this.head < this.entries.length ? this.entries[this.head].seq : this.nextSeq;
  }

  /** A rank's bookkeeping when it first reports: every reservation kept counts until covered. */
  openRank(): RankReservations {
    const rank: RankReservations = {
      prefillTokens: 0,
      decodeBlocks: 0,
      waiting: 0,
      next: 0,
      since: new SinceReport(),
    };
    rank.next = this.headSeq;
    for (let i = this.head; i < this.entries.length; i++) add(rank, this.entries[i], 1);
    return rank;
  }

  /**
   * A request sent at `atMs`. `awaitAcceptance`: reports cover it only once `accept` says when the
   * worker took it (a streamed request's status line); else from `atMs` on.
   */
  add(
    ranks: ReservingRanks,
    atMs: number,
    promptTokens: number,
    blocks: number,
    awaitAcceptance = false,
    waits = true,
  ): Reservation {
    const r = new Reservation(
      this.nextSeq++,
      atMs,
      promptTokens,
      blocks,
      awaitAcceptance ? Infinity : atMs,
      waits,
    );
    this.entries.push(r);
    for (const { reserved } of ranks.values()) add(reserved, r, 1);
    return r;
  }

  /** The worker took the request at `nowMs`: reports measured from then on hold it. */
  accept(r: Reservation, nowMs: number): void {
    if (r.acceptedMs === Infinity) r.acceptedMs = Math.max(nowMs, r.atMs);
  }

  /**
   * The first token came at `nowMs`: the prompt is no longer prefill load, the request no longer
   * waits (taken off the reports that hold it waiting as well).
   */
  firstToken(r: Reservation, ranks: ReservingRanks, nowMs: number): void {
    if (!r.prefilling) return;
    for (const { reserved } of ranks.values()) {
      if (reserved.next > r.seq) {
        if (r.waits) reserved.since.add(nowMs, 0, 1);
        continue;
      }
      reserved.prefillTokens -= r.promptTokens;
      if (r.waits) reserved.waiting -= 1;
    }
    r.prefilling = false;
  }

  /**
   * The request ended at `nowMs`: its blocks are free again, so nothing of it is load any more,
   * in its reservation or in the reports that hold it.
   */
  release(r: Reservation, ranks: ReservingRanks, nowMs: number): void {
    this.firstToken(r, ranks, nowMs);
    if (!r.live) return;
    for (const { reserved } of ranks.values()) {
      if (reserved.next <= r.seq) reserved.decodeBlocks -= r.blocks;
      else reserved.since.add(nowMs, r.blocks, 0);
    }
    r.live = false;
    this.trim(ranks.size);
  }

  /**
   * A report of `rank` measured at `measuredAtMs` arrived: the reservations it holds
   * (`Reservation.coveredBy`) are in it. Passed in order, so one the worker has not accepted yet
   * holds back the later ones too (counted a little longer: the safe side). `rankCount` ranks
   * have reported; a reservation every one of them covers is forgotten.
   */
  cover(rank: RankReservations, measuredAtMs: number, rankCount: number): void {
    rank.since.drop(measuredAtMs);
    // Positions before the head belong to forgotten reservations, which counted for nobody.
    if (rank.next < this.headSeq) rank.next = this.headSeq;
    while (rank.next < this.nextSeq) {
      const r = this.at(rank.next);
      if (!r.coveredBy(measuredAtMs)) break;
      add(rank, r, -1);
      r.passed++;
      rank.next++;
    }
    this.trim(rankCount);
  }

  /**
   * Forgets reservations made before `beforeMs` (the worker TTL ago): no report covered them in
   * all that time, e.g. while the bus was down. Bounds the memory a silent worker can hold.
   */
  expire(beforeMs: number, ranks: ReservingRanks): void {
    for (const { reserved } of ranks.values()) reserved.since.drop(beforeMs);
    while (this.head < this.entries.length && this.entries[this.head].atMs < beforeMs) {
      const r = this.entries[this.head];
      for (const { reserved } of ranks.values()) {
        if (reserved.next > r.seq) continue;
        add(reserved, r, -1);
        reserved.next = r.seq + 1;
      }
      this.head++;
    }
    this.trim(ranks.size);
  }

  private at(seq: number): Reservation {
    return this.entries[this.head + (seq - this.headSeq)];
  }

  /** Drops the oldest reservations while they count for no rank any more. */
  private trim(rankCount: number): void {
    while (this.head < this.entries.length) {
      const r = this.entries[this.head];
      if (r.live && r.passed < rankCount) break;
      this.head++;
    }
    if (this.head === this.entries.length) {
      this.entries = [];
      this.head = 0;
    } else if (this.head >= COMPACT_AFTER && this.head * 2 >= this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }
}

/** Adds (`sign` 1) or takes away (-1) what `r` currently counts for a rank that has not passed it. */
function add(rank: RankReservations, r: Reservation, sign: 1 | -1): void {
  if (r.prefilling) {
    rank.prefillTokens += sign * r.promptTokens;
    if (r.waits) rank.waiting += sign;
  }
  if (r.live) rank.decodeBlocks += sign * r.blocks;
}
