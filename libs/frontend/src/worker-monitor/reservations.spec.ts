import { RankLoad } from './busy-rule';
import {
  judgedLoad,
  KV_BLOCK_TOKENS,
  measuredAtMs,
  RankReservations,
  ReservationLedger,
  reservedBlocks,
  ReservingRank,
} from './reservations';
import { SinceReport } from './since-report';

type Rank = { reserved: RankReservations };

/** The sums of a rank, without its position. */
const sums = ({ reserved: r }: Rank) => ({
  prefillTokens: r.prefillTokens,
  decodeBlocks: r.decodeBlocks,
  waiting: r.waiting,
});

const NONE = { prefillTokens: 0, decodeBlocks: 0, waiting: 0 };

describe('ReservationLedger', () => {
  let sut: ReservationLedger;
  let ranks: Map<number, Rank>;

  /** Rank `i` reports, measured at `atMs`. */
  const report = (i: number, atMs: number): void => {
    let rank = ranks.get(i);
    if (!rank) {
      rank = { reserved: sut.openRank() };
      ranks.set(i, rank);
    }
    sut.cover(rank.reserved, atMs, ranks.size);
  };
  const rank = (i: number): Rank => ranks.get(i) as Rank;

  beforeEach(() => {
    sut = new ReservationLedger();
    ranks = new Map();
  });

  it('counts a request for every rank until a report measured after it was sent covers it', () => {
    report(0, 100);
    sut.add(ranks, 150, 40, 3);
    sut.add(ranks, 200, 10, 1);
    expect(sums(rank(0))).toEqual({ prefillTokens: 50, decodeBlocks: 4, waiting: 2 });
    report(0, 120); // measured before both: covers neither
    expect(sums(rank(0))).toEqual({ prefillTokens: 50, decodeBlocks: 4, waiting: 2 });
    report(0, 150); // measured when the first was sent: it is in the report
    expect(sums(rank(0))).toEqual({ prefillTokens: 10, decodeBlocks: 1, waiting: 1 });
    report(0, 250);
    expect(sums(rank(0))).toEqual(NONE);
    expect(sut.size).toBe(0);
  });

  it('counts a request awaiting acceptance until a report measured after the worker took it', () => {
    report(0, 100);
    const r = sut.add(ranks, 150, 40, 3, true);
    report(0, 200); // sent before, but the worker had not answered it: maybe not read yet
    expect(sums(rank(0))).toEqual({ prefillTokens: 40, decodeBlocks: 3, waiting: 1 });
    sut.accept(r, 220);
    report(0, 210); // measured before it was taken
    expect(sums(rank(0))).toEqual({ prefillTokens: 40, decodeBlocks: 3, waiting: 1 });
    report(0, 220);
    expect(sums(rank(0))).toEqual(NONE);
  });

  it('holds back the requests after one not yet accepted, and passes one that ended', () => {
    report(0, 100);
    const first = sut.add(ranks, 150, 40, 3, true);
    sut.add(ranks, 160, 10, 1); // taken from the moment it was sent
    report(0, 300);
    expect(sums(rank(0))).toEqual({ prefillTokens: 50, decodeBlocks: 4, waiting: 2 });
    sut.release(first, ranks, 0); // it failed before the worker answered: nothing of it counts
    expect(sums(rank(0))).toEqual({ prefillTokens: 10, decodeBlocks: 1, waiting: 1 });
    report(0, 300);
    expect(sums(rank(0))).toEqual(NONE);
    expect(sut.size).toBe(0);
  });

  it("covers per rank: one rank's report leaves the other's share counted", () => {
    report(0, 100);
    report(1, 100);
    sut.add(ranks, 150, 40, 3);
    report(0, 200);
    expect(sums(rank(0))).toEqual(NONE);
    expect(sums(rank(1))).toEqual({ prefillTokens: 40, decodeBlocks: 3, waiting: 1 });
    expect(sut.size).toBe(1); // rank 1 still needs it
    report(1, 200);
    expect(sums(rank(1))).toEqual(NONE);
    expect(sut.size).toBe(0);
  });

  it('stops counting the prompt at the first token, and the blocks when the request ends', () => {
    report(0, 100);
    const r = sut.add(ranks, 150, 40, 3);
    sut.firstToken(r, ranks, 0);
    sut.firstToken(r, ranks, 0);
    expect(sums(rank(0))).toEqual({ prefillTokens: 0, decodeBlocks: 3, waiting: 0 });
    sut.release(r, ranks, 0);
    sut.release(r, ranks, 0);
    expect(sums(rank(0))).toEqual(NONE);
    expect(sut.size).toBe(0); // nothing left to count for anyone
  });

  it('takes off the report what ended since it was measured, until a report measured after', () => {
    report(0, 100);
    const r = sut.add(ranks, 150, 40, 1, false, true); // sent to a full engine: it waits
    report(0, 200); // holds it, waiting
    sut.firstToken(r, ranks, 250);
    expect(rank(0).reserved.since).toMatchObject({ blocks: 0, waiting: 1 });
    sut.release(r, ranks, 300);
    expect(rank(0).reserved.since).toMatchObject({ blocks: 1, waiting: 1 });
    report(0, 260); // measured after its first token, before its end
    expect(rank(0).reserved.since).toMatchObject({ blocks: 1, waiting: 0 });
    report(0, 300);
    expect(rank(0).reserved.since).toMatchObject({ blocks: 0, waiting: 0 });
  });

  it('takes nothing away twice: a request ending after a report covered it', () => {
    report(0, 100);
    report(1, 100);
    const r = sut.add(ranks, 150, 40, 3);
    report(0, 200);
    sut.release(r, ranks, 0); // ended before the first token (cancelled)
    expect(sums(rank(0))).toEqual(NONE);
    expect(sums(rank(1))).toEqual(NONE);
    report(1, 300);
    expect(sums(rank(1))).toEqual(NONE);
    expect(sut.size).toBe(0);
  });

  it('gives a rank that reports late what was sent after its report was measured', () => {
    report(0, 100);
    sut.add(ranks, 150, 40, 3);
    sut.add(ranks, 250, 10, 1);
    report(1, 200); // first report of rank 1
    expect(sums(rank(1))).toEqual({ prefillTokens: 10, decodeBlocks: 1, waiting: 1 });
    expect(sums(rank(0))).toEqual({ prefillTokens: 50, decodeBlocks: 4, waiting: 2 });
  });

  it('forgets reservations no report covered for the TTL', () => {
    report(0, 100);
    sut.add(ranks, 150, 40, 3);
    sut.add(ranks, 5000, 10, 1);
    sut.expire(1000, ranks);
    expect(sums(rank(0))).toEqual({ prefillTokens: 10, decodeBlocks: 1, waiting: 1 });
    expect(sut.size).toBe(1);
    report(0, 200); // an old report afterwards does not take the expired one away again
    expect(sums(rank(0))).toEqual({ prefillTokens: 10, decodeBlocks: 1, waiting: 1 });
  });

  it('keeps a long request counted while later ones are covered and forgotten', () => {
    report(0, 0);
    const long = sut.add(ranks, 10, 100, 10);
    for (let t = 20; t < 2000; t += 10) {
      const r = sut.add(ranks, t, 1, 1);
      sut.release(r, ranks, 0);
    }
    expect(sums(rank(0))).toEqual({ prefillTokens: 100, decodeBlocks: 10, waiting: 1 });
    report(0, 5); // before the long one
    expect(sums(rank(0))).toEqual({ prefillTokens: 100, decodeBlocks: 10, waiting: 1 });
    sut.release(long, ranks, 0);
    report(0, 6);
    expect(sut.size).toBe(0);
  });
});

describe('reservedBlocks', () => {
  it('rounds the prompt and output limit up to whole blocks', () => {
    expect(KV_BLOCK_TOKENS).toBe(16);
    expect(reservedBlocks(1, 0)).toBe(1);
    expect(reservedBlocks(16, 0)).toBe(1);
    expect(reservedBlocks(7, 150)).toBe(10);
    expect(reservedBlocks(0, 0)).toBe(0);
  });

  it("counts in the worker's own block size when its reports give one", () => {
    // A llama.cpp slot of 2048 tokens is one block: a request takes one slot.
    expect(reservedBlocks(60, 200, 2048)).toBe(1);
    expect(reservedBlocks(2000, 200, 2048)).toBe(2);
    expect(reservedBlocks(60, 200, 1)).toBe(260);
  });

  it("is finite and never more than the worker's whole KV cache, whatever max_tokens says", () => {
    expect(reservedBlocks(10, 2 ** 53, 16, 1000)).toBe(1000);
    expect(reservedBlocks(10, 1.7e308, 16, 1000)).toBe(1000);
    expect(reservedBlocks(10, 1.7e308 * 10, 16, 1000)).toBe(1000);
    expect(reservedBlocks(10, Number.NaN, 16, 1000)).toBe(1000);
    expect(reservedBlocks(10, 1.7e308, 16, 0)).toBe(0);
    expect(Number.isFinite(reservedBlocks(10, 1.7e308))).toBe(true);
    expect(reservedBlocks(7, 150, 16, 1000)).toBe(10);
  });
});

describe('measuredAtMs', () => {
  const TTL = 10_000;
  it("uses the report's timestamp when it is sane", () => {
    expect(measuredAtMs(95_000, 100_000, TTL)).toBe(95_000);
    expect(measuredAtMs(100_000, 100_000, TTL)).toBe(100_000);
    expect(measuredAtMs(90_000, 100_000, TTL)).toBe(90_000);
  });
  it('uses the time of arrival for a timestamp in the future, older than the TTL, or none', () => {
    expect(measuredAtMs(100_001, 100_000, TTL)).toBe(100_000);
    expect(measuredAtMs(89_999, 100_000, TTL)).toBe(100_000);
    expect(measuredAtMs(undefined, 100_000, TTL)).toBe(100_000);
  });
});

describe('judgedLoad', () => {
  const rank = (over: Partial<ReservingRank> = {}): ReservingRank => ({
    activeDecodeBlocks: 50,
    kvTotalBlocks: 100,
    activePrefillTokens: 300,
    maxNumBatchedTokens: 1000,
    numRequestsWaiting: 2,
    prefillReported: true,
    reserved: { prefillTokens: 0, decodeBlocks: 0, waiting: 0, next: 0, since: new SinceReport() },
    ...over,
  });
  const reserved = {
    prefillTokens: 400,
    decodeBlocks: 20,
    waiting: 4,
    next: 0,
    since: new SinceReport(),
  };

  it('is the rank itself when nothing is reserved', () => {
    const r = rank();
    expect(judgedLoad(r, 2)).toBe(r);
  });

  it("adds the rank's share of what is reserved", () => {
    expect(judgedLoad(rank({ reserved }), 2)).toEqual<RankLoad>({
      activeDecodeBlocks: 60,
      kvTotalBlocks: 100,
      activePrefillTokens: 500,
      maxNumBatchedTokens: 1000,
      numRequestsWaiting: 4,
    });
  });

  it('takes off the report what ended since, never below zero', () => {
    const since = new SinceReport();
    since.add(10, 60, 3);
    const r = rank({ reserved: { ...reserved, decodeBlocks: 0, waiting: 0, since } });
    // 50 reported, 60 ended since (another frontend's report is older): 0, plus nothing reserved.
    expect(judgedLoad(r, 1)).toMatchObject({ activeDecodeBlocks: 0, numRequestsWaiting: 0 });
    expect(judgedLoad(r, 2)).toMatchObject({ activeDecodeBlocks: 20, numRequestsWaiting: 0.5 });
  });

  it('adds no prefill where it is already own bookkeeping, and no waiting where none is reported', () => {
    const r = rank({ reserved, prefillReported: false, numRequestsWaiting: undefined });
    expect(judgedLoad(r, 1)).toMatchObject({
      activeDecodeBlocks: 70,
      activePrefillTokens: 300,
      numRequestsWaiting: undefined,
    });
  });
});
