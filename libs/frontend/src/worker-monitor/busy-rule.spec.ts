import { BusyThresholds, NO_THRESHOLDS } from '../thresholds/busy-thresholds';
import { isRankBusy, RankLoad } from './busy-rule';

const rank = (over: Partial<RankLoad> = {}): RankLoad => ({
  activeDecodeBlocks: 0,
  kvTotalBlocks: 100,
  activePrefillTokens: 0,
  maxNumBatchedTokens: undefined,
  numRequestsWaiting: undefined,
  ...over,
});

const thresholds = (over: Partial<BusyThresholds> = {}): BusyThresholds => ({
  ...NO_THRESHOLDS,
  ...over,
});

describe('isRankBusy', () => {
  const sut = isRankBusy;

  it('is never busy with no threshold configured, however loaded', () => {
    const full = rank({
      activeDecodeBlocks: 100,
      activePrefillTokens: 1e9,
      maxNumBatchedTokens: 1,
      numRequestsWaiting: 1e6,
    });
    expect(sut(full, thresholds())).toBe(false);
  });

  describe('active decode blocks threshold', () => {
    const t = thresholds({ activeDecodeBlocks: 0.8 });

    it.each([
      [79, false],
      [80, false],
      [81, true],
      [100, true],
    ])('with 0.8 of 100 blocks, %i active blocks → busy %s', (active, busy) => {
      expect(sut(rank({ activeDecodeBlocks: active }), t)).toBe(busy);
    });

    it('fires on any use above threshold 0, never at a full cache with threshold 1', () => {
      expect(sut(rank({ activeDecodeBlocks: 0 }), thresholds({ activeDecodeBlocks: 0 }))).toBe(
        false,
      );
      expect(sut(rank({ activeDecodeBlocks: 1 }), thresholds({ activeDecodeBlocks: 0 }))).toBe(
        true,
      );
      expect(sut(rank({ activeDecodeBlocks: 100 }), thresholds({ activeDecodeBlocks: 1 }))).toBe(
        false,
      );
    });

    it('never fires for a rank reporting kv_total_blocks 0', () => {
      const empty = rank({ activeDecodeBlocks: 5, kvTotalBlocks: 0 });
      expect(sut(empty, thresholds({ activeDecodeBlocks: 0 }))).toBe(false);
    });
  });

  describe('active prefill tokens threshold', () => {
    const t = thresholds({ activePrefillTokens: 1000 });

    it.each([
      [999, false],
      [1000, false],
      [1001, true],
    ])('with threshold 1000, %i prefill tokens → busy %s', (tokens, busy) => {
      expect(sut(rank({ activePrefillTokens: tokens }), t)).toBe(busy);
    });

    it('treats threshold 0 as "busy while any prefill is active"', () => {
      const zero = thresholds({ activePrefillTokens: 0 });
      expect(sut(rank({ activePrefillTokens: 0 }), zero)).toBe(false);
      expect(sut(rank({ activePrefillTokens: 1 }), zero)).toBe(true);
    });
  });

  describe('active prefill tokens fraction threshold', () => {
    it.each([
      [6553, false],
      [6554, true],
    ])('with 0.8 of 8192 (floor 6553), %i tokens → busy %s', (tokens, busy) => {
      const r = rank({ activePrefillTokens: tokens, maxNumBatchedTokens: 8192 });
      expect(sut(r, thresholds({ activePrefillTokensFrac: 0.8 }))).toBe(busy);
    });

    it('allows fractions above 1', () => {
      const t = thresholds({ activePrefillTokensFrac: 1.5 });
      expect(sut(rank({ activePrefillTokens: 150, maxNumBatchedTokens: 100 }), t)).toBe(false);
      expect(sut(rank({ activePrefillTokens: 151, maxNumBatchedTokens: 100 }), t)).toBe(true);
    });

    it('never fires for a rank that does not report max_num_batched_tokens', () => {
      const r = rank({ activePrefillTokens: 1e9, maxNumBatchedTokens: undefined });
      expect(sut(r, thresholds({ activePrefillTokensFrac: 0 }))).toBe(false);
    });

    // docs/configuration.md: busy when tokens > floor(F × max). Mathematically floor(0.29 × 100) = 29,
    // but the binary product 0.29 * 100 is 28.999999999999996.
    it.each([
      [0.29, 100, 29],
      [0.57, 10000, 5700],
    ])('is not busy exactly at floor(%d × %i) = %i', (frac, max, tokens) => {
      const r = rank({ activePrefillTokens: tokens, maxNumBatchedTokens: max });
      expect(sut(r, thresholds({ activePrefillTokensFrac: frac }))).toBe(false);
    });
  });

  describe('waiting requests threshold', () => {
    const t = thresholds({ waitingRequests: 2 });

    it.each([
      [0, false],
      [2, false],
      [3, true],
      [50, true],
    ])('with threshold 2, %i requests waiting → busy %s', (waiting, busy) => {
      expect(sut(rank({ numRequestsWaiting: waiting }), t)).toBe(busy);
    });

    it('treats threshold 0 as "busy while any request waits"', () => {
      const zero = thresholds({ waitingRequests: 0 });
      expect(sut(rank({ numRequestsWaiting: 0 }), zero)).toBe(false);
      expect(sut(rank({ numRequestsWaiting: 1 }), zero)).toBe(true);
    });

    it('never fires for a rank that does not report num_requests_waiting', () => {
      expect(sut(rank({ numRequestsWaiting: undefined }), thresholds({ waitingRequests: 0 }))).toBe(
        false,
      );
      const unreported: RankLoad = rank();
      delete unreported.numRequestsWaiting;
      expect(sut(unreported, thresholds({ waitingRequests: 0 }))).toBe(false);
    });

    it('does not fire on other load, and no other threshold fires on waiting requests', () => {
      const loaded = rank({ activeDecodeBlocks: 100, activePrefillTokens: 1e9 });
      expect(sut(loaded, t)).toBe(false);
      const others = thresholds({
        activeDecodeBlocks: 0,
        activePrefillTokens: 0,
        activePrefillTokensFrac: 0,
      });
      expect(sut(rank({ numRequestsWaiting: 1e6, maxNumBatchedTokens: 100 }), others)).toBe(false);
    });
  });

  it('is busy when any one of several configured thresholds is exceeded', () => {
    const t = thresholds({
      activeDecodeBlocks: 0.9,
      activePrefillTokens: 1000,
      activePrefillTokensFrac: 0.5,
      waitingRequests: 4,
    });
    const calm = {
      activeDecodeBlocks: 90,
      activePrefillTokens: 50,
      maxNumBatchedTokens: 100,
      numRequestsWaiting: 4,
    };
    expect(sut(rank(calm), t)).toBe(false);
    expect(sut(rank({ ...calm, activeDecodeBlocks: 91 }), t)).toBe(true);
    expect(sut(rank({ ...calm, activePrefillTokens: 51 }), t)).toBe(true);
    expect(
      sut(rank({ ...calm, maxNumBatchedTokens: undefined, activePrefillTokens: 1001 }), t),
    ).toBe(true);
    expect(sut(rank({ ...calm, numRequestsWaiting: 5 }), t)).toBe(true);
  });
});

describe('isRankBusy with a scale (the release factor of a busy rank)', () => {
  const sut = isRankBusy;

  it.each([
    // [load, threshold, scale 0.5: busy?]
    ['decode', rank({ activeDecodeBlocks: 41 }), thresholds({ activeDecodeBlocks: 0.8 }), true],
    ['decode', rank({ activeDecodeBlocks: 40 }), thresholds({ activeDecodeBlocks: 0.8 }), false],
    [
      'prefill',
      rank({ activePrefillTokens: 501 }),
      thresholds({ activePrefillTokens: 1000 }),
      true,
    ],
    [
      'prefill',
      rank({ activePrefillTokens: 500 }),
      thresholds({ activePrefillTokens: 1000 }),
      false,
    ],
    // floor(0.5 × 1001) = 500 tokens, × 0.5 = 250
    [
      'frac',
      rank({ activePrefillTokens: 251, maxNumBatchedTokens: 1001 }),
      thresholds({ activePrefillTokensFrac: 0.5 }),
      true,
    ],
    [
      'frac',
      rank({ activePrefillTokens: 250, maxNumBatchedTokens: 1001 }),
      thresholds({ activePrefillTokensFrac: 0.5 }),
      false,
    ],
    ['waiting', rank({ numRequestsWaiting: 2 }), thresholds({ waitingRequests: 3 }), true],
    ['waiting', rank({ numRequestsWaiting: 1 }), thresholds({ waitingRequests: 3 }), false],
  ])('scales the %s limit: %j at %j → busy %s', (_term, load, t, busy) => {
    expect(sut(load, t, 0.5)).toBe(busy);
  });

  it('is the unscaled rule at scale 1, exactly (0.29 × 100 stays 29)', () => {
    const r = rank({ activePrefillTokens: 29, maxNumBatchedTokens: 100 });
    expect(sut(r, thresholds({ activePrefillTokensFrac: 0.29 }), 1)).toBe(false);
    expect(sut(rank({ activeDecodeBlocks: 80 }), thresholds({ activeDecodeBlocks: 0.8 }), 1)).toBe(
      false,
    );
    expect(sut(rank({ activeDecodeBlocks: 81 }), thresholds({ activeDecodeBlocks: 0.8 }), 1)).toBe(
      true,
    );
  });
});
