import {
  DEFAULT_BATCH_TOKENS,
  SEED_FIRST_STEP_MS,
  SEED_FULL_KV_MS,
  SEED_FULL_STEP_MS,
  seedFit,
  SHIFT_RUN,
  TOKEN_UNIT,
  TtftModel,
  workUnits,
} from './ttft-model';

/** A seeded generator (mulberry32): every run of the spec sees the same numbers. */
function prng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The simulated worker: 20 ms on an idle worker plus 30 ms per 1000 tokens plus 40 ms at full KV
 * use, times its slowness.
 */
const truth = (slowness: number, u: number, k: number): number => slowness * (20 + 30 * u + 40 * k);

const WITHIN = 0.2;

/**
 * Explorations after which a fit inflated by overload predicts a calm worker within 20 %, and
 * the most after which every prediction of the next 20 is (docs/operations.md, "TTFT objective").
 */
const LOCKUP_RECOVERY = SHIFT_RUN + 3;
const LOCKUP_SETTLED = 35;
const within = (predicted: number, actual: number): boolean =>
  Math.abs(predicted - actual) / actual <= WITHIN;

interface Run {
  /** Factor the worker's TTFT changes by after the warm-up (2 = twice as slow). */
  k: number;
  /** Each observation is the true TTFT × (1 ± up to this share), uniformly. */
  jitter: number;
  seed: number;
}

/**
 * Requests observed at the new speed after which every prediction (of the next 20 requests, each
 * with 0 to 4000 tokens of work and 0 to 100 % KV use) is within 20 % of the true TTFT.
 */
function requestsToAdapt({ k, jitter, seed }: Run): number {
  const rnd = prng(seed);
  const sut = new TtftModel(seedFit(DEFAULT_BATCH_TOKENS));
  const noisy = (t: number): number => t * (1 + jitter * (2 * rnd() - 1));
  for (let i = 0; i < 100; i++) {
    const u = rnd() * 4;
    const kv = rnd();
    sut.observe(u, kv, noisy(truth(1, u, kv)));
  }
  const ok: boolean[] = [];
  for (let i = 0; i < 80; i++) {
    const u = rnd() * 4;
    const kv = rnd();
    ok.push(within(sut.predict(u, kv), truth(k, u, kv)));
    sut.observe(u, kv, noisy(truth(k, u, kv)));
  }
  const n = ok.findIndex((_, i) => ok.slice(i, i + 20).every(Boolean));
  return n === -1 ? Infinity : n;
}

/** Over 200 seeded runs: the median and the worst count of requestsToAdapt. */
function adaptation(k: number, jitter: number): { median: number; max: number } {
  const ns = Array.from({ length: 200 }, (_, i) => requestsToAdapt({ k, jitter, seed: i + 1 }));
  ns.sort((a, b) => a - b);
  return { median: ns[100], max: ns[199] };
}

describe('TtftModel', () => {
  it('starts from the seed: one first step plus a full step per max_num_batched_tokens', () => {
    const sut = new TtftModel(seedFit(4096));
    expect(sut.observations).toBe(0);
    expect(sut.predict(0, 0)).toBe(SEED_FIRST_STEP_MS);
    // 8192 tokens of work at 4096 per step: two full steps after the first.
    expect(sut.predict(workUnits(8000, 192), 0)).toBeCloseTo(
      SEED_FIRST_STEP_MS + 2 * SEED_FULL_STEP_MS,
    );
    // A full KV cache: one decode step over it on top.
    expect(sut.predict(0, 1)).toBe(SEED_FIRST_STEP_MS + SEED_FULL_KV_MS);
    // No budget reported: the default one.
    expect(seedFit(undefined).msPerUnit).toBe(
      (SEED_FULL_STEP_MS * TOKEN_UNIT) / DEFAULT_BATCH_TOKENS,
    );
  });

  it('learns a worker unlike its seed from its first observations', () => {
    const rnd = prng(7);
    const sut = new TtftModel(seedFit(DEFAULT_BATCH_TOKENS));
    const misses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const u = rnd() * 4;
      const kv = rnd();
      if (!within(sut.predict(u, kv), truth(3, u, kv))) misses.push(i);
      sut.observe(u, kv, truth(3, u, kv));
    }
    // The seed is off (60 ms + 90 ms/1000 tokens + 120 ms at full KV against 20 + 12.2 + 34):
    // only the first few miss.
    expect(misses[0]).toBe(0);
    expect(Math.max(...misses)).toBeLessThan(4);
    // Close, not exact: the fit is pulled a little towards the seed (SEED_WEIGHT).
    expect(Math.abs(sut.fit.baseMs - 60) / 60).toBeLessThan(0.05);
    expect(Math.abs(sut.fit.msPerUnit - 90) / 90).toBeLessThan(0.05);
    expect(Math.abs(sut.fit.msAtFullKv - 120) / 120).toBeLessThan(0.05);
    expect(sut.observations).toBe(40);
  });

  it('converges on a noisy worker and stays there', () => {
    const rnd = prng(11);
    const sut = new TtftModel(seedFit(DEFAULT_BATCH_TOKENS));
    for (let i = 0; i < 200; i++) {
      const u = rnd() * 4;
      const kv = rnd();
      sut.observe(u, kv, truth(1, u, kv) * (1 + 0.1 * (2 * rnd() - 1)));
    }
    for (const u of [0, 1, 2, 4]) {
      for (const kv of [0, 0.5, 1]) expect(within(sut.predict(u, kv), truth(1, u, kv))).toBe(true);
    }
  });

  it('one stalled request does not swing the fit', () => {
    const rnd = prng(3);
    const sut = new TtftModel(seedFit(DEFAULT_BATCH_TOKENS));
    for (let i = 0; i < 100; i++) {
      const u = rnd() * 4;
      const kv = rnd();
      sut.observe(u, kv, truth(1, u, kv));
    }
    sut.observe(1, 0.5, 5000); // a 5 s stall, 70 times the usual
    for (const u of [0.5, 2, 4]) {
      for (const kv of [0, 1]) expect(within(sut.predict(u, kv), truth(1, u, kv))).toBe(true);
    }
  });

  // The figure docs/architecture.md states ("TTFT prediction"): a worker whose speed changes by
  // 2× or more either way is predicted within 20 % from the request after the SHIFT_RUN-th (3rd);
  // with ±10 % jitter in the median run, and at worst after 10 for a slower worker (a fit of three
  // parameters from about 20 noisy requests is off by more than 20 % somewhere in the range now
  // and then) and after 50 for a faster one: its misses on the shortest first tokens are within
  // the worker's noise (NOISE_MULTIPLE), so they break the run and forgetting does the rest.
  it.each([
    [10, 10],
    [4, 10],
    [2, 10],
    [0.5, 50],
    [0.25, 50],
  ])(
    'adapts to a worker whose TTFT changes %p× within SHIFT_RUN requests, with 10 %% jitter (worst %p)',
    (k, worst) => {
      expect(adaptation(k, 0)).toEqual({ median: SHIFT_RUN, max: SHIFT_RUN });
      const { median, max } = adaptation(k, 0.1);
      expect(median).toBe(SHIFT_RUN);
      expect(max).toBeLessThanOrEqual(worst);
    },
  );

  // What the e2e spec of a worker that slows down ran into on a busy machine: the last two
  // requests at the old speed each took 40 % longer than predicted (a run held, not yet a shift),
  // then the worker turned ten times slower. The slow requests must start their own run, not end
  // the held one with its median of 1.4.
  it('a shift after a run of small misses the same way is caught within SHIFT_RUN requests', () => {
    const sut = new TtftModel(seedFit(DEFAULT_BATCH_TOKENS));
    const rnd = prng(7);
    for (let i = 0; i < 100; i++) {
      const u = rnd() * 4;
      const kv = rnd();
      sut.observe(u, kv, truth(1, u, kv));
    }
    sut.observe(0.4, 0, 1.4 * truth(1, 0.4, 0));
    sut.observe(0.4, 0, 1.4 * truth(1, 0.4, 0));
    for (let i = 0; i < SHIFT_RUN; i++) sut.observe(0.4, 0, truth(10, 0.4, 0));
    expect(within(sut.predict(0.4, 0), truth(10, 0.4, 0))).toBe(true);
  });

  // Smaller changes do not trip the shift rule every time and are followed by forgetting.
  it.each([1.5, 1.25, 0.8])('follows a %p× change by forgetting within 35 requests', (k) => {
    const { median, max } = adaptation(k, 0.1);
    expect(median).toBeLessThanOrEqual(10);
    expect(max).toBeLessThanOrEqual(35);
  });

  // The gate's exploration (docs/operations.md, "TTFT objective"): a fit inflated by overload
  // (TTFT then includes waiting for KV room, which u and k do not explain) must come down from
  // the requests the gate lets through once load has fallen — each alone on its worker, so u is
  // its own prompt only (0–500 tokens), and KV use is what is left of the overload (0–30 %).
  it('comes down from a base inflated to 1000 ms within SHIFT_RUN + 3 explorations', () => {
    const runs = Array.from({ length: 200 }, (_, seed) => {
      const rnd = prng(seed + 1);
      const sut = new TtftModel(seedFit(DEFAULT_BATCH_TOKENS));
      const calm = (u: number, kv: number): number => 50 + 30 * u + 40 * kv;
      for (let i = 0; i < 100; i++) {
        const u = rnd() * 4;
        const kv = rnd();
        sut.observe(u, kv, (1000 + 30 * u + 40 * kv) * (1 + 0.1 * (2 * rnd() - 1)));
      }
      const inflated = sut.fit.baseMs;
      const ok: boolean[] = [];
      for (let i = 0; i < 60; i++) {
        const u = rnd() * 0.5;
        const kv = rnd() * 0.3;
        ok.push(within(sut.predict(u, kv), calm(u, kv)));
        sut.observe(u, kv, calm(u, kv) * (1 + 0.1 * (2 * rnd() - 1)));
      }
      return {
        inflated,
        first: ok.indexOf(true),
        settled: ok.findIndex((_, i) => ok.slice(i, i + 20).every(Boolean)),
      };
    });
    for (const { inflated } of runs) expect(inflated).toBeGreaterThan(850);
    // The first prediction within 20 % comes after SHIFT_RUN explorations in the median run, and
    // three more at worst (a stray inside the run, then the pull of the seed on a scaled fit) ...
    const first = runs.map((r) => r.first).sort((x, y) => x - y);
    expect(first[100]).toBe(SHIFT_RUN);
    expect(first[199]).toBe(LOCKUP_RECOVERY);
    // ... and from then on it stays there (the next 20 all within) in most runs; in the others
    // b and c, scaled down with a, are relearned from the narrow range explorations cover.
    const settled = runs.map((r) => r.settled).sort((x, y) => x - y);
    expect(settled[100]).toBe(SHIFT_RUN);
    expect(settled[199]).toBeLessThanOrEqual(LOCKUP_SETTLED);
  });

  // What the benchmark's workers look like under overload with the thresholds on: held at one
  // load (1000-token prompts, 2000 to 8000 tokens ahead, KV use 78 to 82 %), a first token after
  // about one step whatever the tokens ahead (one step prefills them all). u and k barely vary,
  // so the observations fix only a + u b + k c near that point; least squares with forgetting and
  // no pull towards the seed wound up along the other directions and predicted seconds now and
  // then (issue 14: every sampled refusal would have met the objective).
  it('keeps a worker held at one load predicted near its TTFT, there and away from it', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const rnd = prng(seed);
      const sut = new TtftModel(seedFit(DEFAULT_BATCH_TOKENS));
      const flat = (): number => 235 * (1 + 0.1 * (2 * rnd() - 1));
      let worst = 0;
      for (let i = 0; i < 1000; i++) {
        const u = 3 + rnd() * 6;
        const kv = 0.78 + rnd() * 0.04;
        if (i >= 20) worst = Math.max(worst, Math.abs(sut.predict(u, kv) - 235) / 235);
        sut.observe(u, kv, flat());
      }
      expect(worst).toBeLessThan(0.3);
      // Away from the load it was held at, it stays between the seed's idle worker and ~2× there.
      for (const [u, kv] of [
        [1, 0],
        [1, 0.8],
        [12, 1],
      ]) {
        expect(sut.predict(u, kv)).toBeGreaterThan(SEED_FIRST_STEP_MS);
        expect(sut.predict(u, kv)).toBeLessThan(2 * 235);
      }
    }
  });

  // What the real llama.cpp server (the micro model, 4 slots) gave the bench's TTFT objective: a
  // first token after ~4 ms when the engine is idle as the request arrives and after the running
  // step (15–25 ms, now and then 50) otherwise, whatever the slots in use (k). Nearly every
  // observation misses by over SHIFT_TOLERANCE; runs of three the same way rescaled the whole
  // fit, c with it, by what only a had missed, and a free worker at k = 0.5 was predicted at
  // 100–200 ms and refused under a 93 ms objective while first tokens came after 30 ms.
  it('keeps an engine whose first token waits for the running step below its slowest one', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const rnd = prng(seed);
      const sut = new TtftModel(seedFit(undefined));
      let highest = 0;
      for (let i = 0; i < 700; i++) {
        const kv = Math.floor(rnd() * 4) / 4;
        const behindStep = 15 + 10 * rnd() + (rnd() < 0.1 ? 25 * rnd() : 0);
        sut.observe(workUnits(0, 16), kv, rnd() < 0.3 ? 3 + rnd() : behindStep);
        if (i < 50) continue;
        for (const k of [0, 0.25, 0.5, 0.75, 1]) {
          highest = Math.max(highest, sut.predict(workUnits(0, 16), k));
        }
      }
      expect(highest).toBeLessThan(50);
    }
  });

  it('ignores observations that cannot be times', () => {
    const sut = new TtftModel(seedFit(DEFAULT_BATCH_TOKENS));
    sut.observe(Number.NaN, 0, 10);
    sut.observe(1, Number.NaN, 10);
    sut.observe(1, 0, -1);
    sut.observe(1, 0, Number.POSITIVE_INFINITY);
    expect(sut.observations).toBe(0);
    expect(sut.fit).toEqual(seedFit(DEFAULT_BATCH_TOKENS));
  });
});
