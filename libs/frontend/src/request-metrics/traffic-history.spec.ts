import {
  HISTORY_BUCKET_MS,
  HISTORY_BUCKETS,
  MAX_HISTORY_MODELS,
  TrafficHistory,
} from './traffic-history';

const M = 'Qwen/Qwen3-0.6B';
const BUCKET = HISTORY_BUCKET_MS;
/** A moment well past zero, at the start of a bucket. */
const T0 = 1000 * BUCKET;

describe('TrafficHistory', () => {
  let now: number;
  let sut: TrafficHistory;

  beforeEach(() => {
    now = T0;
    sut = new TrafficHistory(() => now);
  });

  const repeat = (n: number, f: () => void) => {
    for (let i = 0; i < n; i++) f();
  };

  it('keeps nothing for a model until its load is sampled', () => {
    sut.admitted(M);
    sut.rejected(M, 'standard');
    expect(sut.window(M)).toBeUndefined();
    expect(sut.models()).toEqual([]);
  });

  it('counts requests into 5-second buckets and divides by the bucket width', () => {
    sut.sample(M, 0, null);
    repeat(10, () => sut.admitted(M));
    now = T0 + BUCKET - 1;
    repeat(5, () => sut.rejected(M, 'standard'));
    now = T0 + BUCKET; // the next bucket
    repeat(3, () => sut.admitted(M));
    repeat(2, () => sut.rejected(M, 'sheddable'));
    sut.rejected(M, 'critical');
    now = T0 + 2 * BUCKET + 1;
    const w = sut.window(M);
    expect(w?.endsMs).toEqual([T0 + BUCKET, T0 + 2 * BUCKET]);
    expect(w?.admitted).toEqual([2, 0.6]);
    expect(w?.rejected).toEqual({
      critical: [0, 0.2],
      standard: [1, 0],
      sheddable: [0, 0.4],
    });
  });

  it('serves a bucket once it is complete', () => {
    sut.sample(M, 0.5, null);
    now = T0 + BUCKET - 1;
    repeat(5, () => sut.admitted(M));
    expect(sut.window(M)).toMatchObject({ endsMs: [], admitted: [], busyShare: [] });
    now = T0 + BUCKET;
    expect(sut.window(M)).toMatchObject({ endsMs: [T0 + BUCKET], admitted: [1], busyShare: [0.5] });
  });

  it('divides the first bucket by the time since the history began', () => {
    now = T0 + 3000;
    sut.sample(M, 0, null);
    repeat(4, () => sut.admitted(M));
    now = T0 + BUCKET + 1000;
    expect(sut.window(M)?.admitted).toEqual([2]);
  });

  it('averages the load samples of a bucket; null where none was taken', () => {
    sut.sample(M, 0.5, 0.2);
    sut.sample(M, 1, null);
    now = T0 + 2 * BUCKET; // one bucket with no sample
    sut.sample(M, 0, 0.6);
    now = T0 + 3 * BUCKET;
    const w = sut.window(M);
    expect(w?.busyShare).toEqual([0.75, null, 0]);
    expect(w?.kvUsage).toEqual([0.2, null, 0.6]);
  });

  it('keeps the last 120 buckets (10 minutes), the oldest overwritten', () => {
    sut.sample(M, 0, null);
    for (let b = 0; b < HISTORY_BUCKETS + 30; b++) {
      now = T0 + b * BUCKET;
      repeat(b % 7, () => sut.admitted(M));
      sut.sample(M, 0, null);
    }
    now = T0 + (HISTORY_BUCKETS + 30) * BUCKET;
    const w = sut.window(M);
    expect(w?.admitted).toHaveLength(HISTORY_BUCKETS);
    expect(w?.endsMs[0]).toBe(T0 + 31 * BUCKET);
    expect(w?.endsMs.at(-1)).toBe(now);
    expect(w?.admitted).toEqual(
      Array.from({ length: HISTORY_BUCKETS }, (_, i) => ((i + 30) % 7) / 5),
    );
  });

  it('clears the buckets skipped while nothing happened, also after a long silence', () => {
    sut.sample(M, 1, 1);
    repeat(3, () => sut.admitted(M));
    now = T0 + 3 * BUCKET;
    sut.admitted(M);
    now = T0 + 4 * BUCKET;
    let w = sut.window(M);
    expect(w?.admitted).toEqual([0.6, 0, 0, 0.2]);
    expect(w?.busyShare).toEqual([1, null, null, null]);

    now = T0 + 1000 * BUCKET; // longer than the window: every slot is stale
    sut.admitted(M);
    now = T0 + 1001 * BUCKET;
    w = sut.window(M);
    expect(w?.admitted).toEqual([...Array<number>(HISTORY_BUCKETS - 1).fill(0), 0.2]);
    expect(w?.busyShare.every((x) => x === null)).toBe(true);
  });

  it('writes into the newest bucket when the clock steps back', () => {
    sut.sample(M, 0, null);
    now = T0 + BUCKET;
    sut.admitted(M);
    now = T0 - 3 * BUCKET;
    sut.admitted(M);
    now = T0 + 2 * BUCKET;
    expect(sut.window(M)?.admitted).toEqual([0, 0.4]);
  });

  it('forgets a model at once, and drops a history idle for a whole window', () => {
    sut.sample(M, 0, null);
    sut.sample('other', 0, null);
    sut.sample('idle', 0, null);
    sut.forget(M);
    expect(sut.window(M)).toBeUndefined();
    sut.admitted(M); // a late request of the forgotten model does not bring it back
    expect(sut.models()).toEqual(['other', 'idle']);

    now = T0 + HISTORY_BUCKETS * BUCKET; // the first bucket is still the window's oldest
    sut.rejected('other', 'standard');
    sut.dropIdle();
    expect(sut.models()).toEqual(['other', 'idle']);
    now = T0 + (HISTORY_BUCKETS + 1) * BUCKET;
    sut.window('idle'); // reading is not activity
    sut.dropIdle();
    expect(sut.models()).toEqual(['other']);
  });

  it('keeps a history for at most MAX_HISTORY_MODELS models', () => {
    for (let i = 0; i < MAX_HISTORY_MODELS + 5; i++) sut.sample(`m${i}`, 0, null);
    expect(sut.models()).toHaveLength(MAX_HISTORY_MODELS);
    expect(sut.window(`m${MAX_HISTORY_MODELS}`)).toBeUndefined();
    sut.forget('m0');
    sut.sample('late', 0, null);
    expect(sut.window('late')).toBeDefined();
  });
});
