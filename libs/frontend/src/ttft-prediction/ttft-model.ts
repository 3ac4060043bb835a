/**
 * The time-to-first-token model of one worker (docs/architecture.md, "TTFT prediction"):
 *
 *     TTFT ≈ a + b × u + c × k,   u = (tokens ahead + own prompt tokens) / TOKEN_UNIT,
 *                                 k = the worker's KV usage 0..1 (WorkerEntry.judgedKvUsage)
 *
 * An engine with chunked prefill works through the prompt tokens queued before a request, then
 * the request's own, at about one step per `max_num_batched_tokens`; `a` is what a request pays
 * on an idle worker (the step it joins, the round trip), `b` the time per TOKEN_UNIT tokens to
 * prefill, `c` what a worker whose KV cache is full adds: every step it joins also decodes the
 * running batch, and a step over a full cache is slower (and a full cache makes new requests
 * wait for room). u counts only prompts not yet prefilled; k sees the requests that are past
 * their first token and still decoding, so a worker holding many of them is not taken for idle.
 * All three are fitted online by least squares with exponential forgetting and a weak pull towards
 * the seed (ridge), so a
 * worker that changes speed is followed; every constant is below.
 */

/** The regressor is counted in thousands of tokens, so that `a` and `b` are of like size. */
export const TOKEN_UNIT = 1000;

/** Seed of `a`: the first token on an idle worker, one engine step with a short prefill. */
export const SEED_FIRST_STEP_MS = 20;

/**
 * Seed of `b`: one engine step that prefills a whole `max_num_batched_tokens` budget takes this
 * long (the order of a small model's 8192-token step on one current GPU; the simulated worker's
 * timing model takes 169 ms at `--speedup 1`). Observations replace it from the first request on.
 */
export const SEED_FULL_STEP_MS = 100;

/**
 * Seed of `c`: one decode step over a full KV cache, the order of what a request joining such a
 * worker waits for on top of an idle one (the simulated worker's timing model,
 * libs/sim-worker/src/engine/step-timing.ts: `decodeStepMs(1)` ≈ 34 ms at `--speedup 1`).
 * Observations replace it as the worker's KV use varies.
 */
export const SEED_FULL_KV_MS = 34;

/**
 * Prompt tokens one step prefills per rank when the worker reports no `max_num_batched_tokens`:
 * the simulated worker's default, and vLLM's for online serving on a datacenter GPU.
 */
export const DEFAULT_BATCH_TOKENS = 8192;

/**
 * Forgetting factor λ: each observation weighs λ times the one after it, so the fit remembers
 * about 1 / (1 − λ) = 20 requests. Lower follows drift sooner and trusts noise more; a change of
 * speed is caught sooner still by the shift rule below.
 */
export const FORGETTING = 0.95;

/**
 * Weight of the seed along each parameter, in observations at φ of one unit (a tenth of one): the
 * fit is the least-squares one over the forgotten observations plus this pull towards the seed,
 * which is never forgotten. Where the observations vary, they outweigh it from the first few
 * requests on (the fit stays a few per cent short of an exact one); along a direction they do not
 * vary in (a worker held at one load: u and k nearly constant, so a, b and c are one sum), the
 * seed decides how the sum is split, so the fit cannot wander off along it and predict nonsense
 * for the first request at another load. (Recursive least squares without it winds up there.)
 */
export const SEED_WEIGHT = 0.1;

/**
 * One observation moves the fit by at most this share of its prediction (the innovation is
 * clipped), so that one stalled request — a garbage collection, a lost packet — does not swing
 * it (the observation counts as its prediction ± the clip). Changes of speed are caught by the
 * shift rule below instead.
 */
export const INNOVATION_CLIP = 0.5;

/** The clip never gets narrower than this, so a fit near zero can still grow. */
export const CLIP_FLOOR_MS = 1;

/**
 * What the worker's first tokens miss their predictions by when nothing changes: an engine whose
 * first token comes after whatever step is running (llama.cpp's micro model: 4 ms idle, 20 ms
 * behind one step) misses by more than SHIFT_TOLERANCE all the time. A miss within NOISE_MULTIPLE
 * times the fit's typical miss (its mean absolute miss in ms, forgotten as the fit is) is that
 * noise: it is not clipped below this, and it never counts towards a shift of speed. Without it,
 * runs of three such misses in one direction rescaled the whole fit, b and c with it, by what only
 * `a` had missed, until a free worker was predicted at 5× its real first token and refused
 * (docs/decisions/0235-ttft-noise-is-not-a-shift.md).
 */
export const NOISE_MULTIPLE = 3;

/**
 * A shift of speed: SHIFT_RUN observations in a row that miss their prediction by more than
 * SHIFT_TOLERANCE (relative) and by more than the worker's noise (NOISE_MULTIPLE), all in the
 * same direction. The fit (held as it was while the run lasted) is then scaled at once — all
 * three parameters — by the median of their ratios to its predictions (a slower or faster worker
 * scales every time alike; the median ignores one stray), instead of forgetting its way there
 * over tens of requests.
 */
export const SHIFT_TOLERANCE = 0.3;
export const SHIFT_RUN = 3;

/**
 * The misses of one run must agree: an observation whose ratio to its prediction is more than
 * this factor away from the run's median ratio does not continue the run but starts a new one
 * (the run held so far is applied as ordinary updates). Without it two noisy misses of +40 %
 * followed by the first request of a worker turned ten times slower made a run whose median said
 * "1.4× slower", and the real shift then had to build a run of its own.
 */
export const SHIFT_AGREEMENT = 2;

/** The fitted parameters: TTFT ≈ `baseMs` + `msPerUnit` × u + `msAtFullKv` × k. */
export interface TtftFit {
  readonly baseMs: number;
  readonly msPerUnit: number;
  readonly msAtFullKv: number;
}

/** `b` of the seed of a worker that steps `batchTokens` prompt tokens per rank. */
function seedMsPerUnit(batchTokens: number | undefined): number {
  const budget = batchTokens !== undefined && batchTokens > 0 ? batchTokens : DEFAULT_BATCH_TOKENS;
  return (SEED_FULL_STEP_MS * TOKEN_UNIT) / budget;
}

/** The seed of a worker that steps `batchTokens` prompt tokens per rank. */
export function seedFit(batchTokens: number | undefined): TtftFit {
  return {
    baseMs: SEED_FIRST_STEP_MS,
    msPerUnit: seedMsPerUnit(batchTokens),
    msAtFullKv: SEED_FULL_KV_MS,
  };
}

/** What the seed of a worker that steps `batchTokens` predicts for `u` and `k`; as seedFit's. */
export function seedPredictMs(batchTokens: number | undefined, u: number, k: number): number {
  return SEED_FIRST_STEP_MS + seedMsPerUnit(batchTokens) * u + SEED_FULL_KV_MS * k;
}

/** u of the model: the tokens a request waits for, itself included, in TOKEN_UNITs. */
export function workUnits(tokensAhead: number, promptTokens: number): number {
  return Math.max(0, tokensAhead + promptTokens) / TOKEN_UNIT;
}

/** Parameters of the fit: a, b, c. */
const N = 3;

/**
 * One worker's fit: exponentially weighted least squares with a pull towards the seed (ridge),
 * kept as its sufficient statistics — Σ w φ φᵀ (3×3) and Σ w φ y — and solved (3×3) after each
 * observation, with a, b and c kept ≥ 0 (a parameter the solution would make negative is held at
 * 0 and the others solved again). Predicting allocates nothing; an observation allocates only for
 * the shift rule's run.
 */
export class TtftModel {
  /** θ = [a, b, c], the current solution. */
  private readonly theta = new Float64Array(N);
  /** The seed θ₀ the fit is pulled towards (scaled with the fit by the shift rule). */
  private readonly prior = new Float64Array(N);
  /** Σ w φ φᵀ over the observations, row-major. */
  private readonly xx = new Float64Array(N * N);
  /** Σ w φ y over the observations. */
  private readonly xy = new Float64Array(N);
  /** Scratch: φ of one observation, and the system of one solve with its right-hand side. */
  private readonly phi = new Float64Array(N);
  private readonly m = new Float64Array(N * N);
  private readonly r = new Float64Array(N);
  /** Observations of the current run of misses in one direction: [u, k, ttftMs]. */
  private run: Array<readonly [number, number, number]> = [];
  private runSign = 0;
  private n = 0;
  /** The mean absolute miss (ms, clipped) of the updates, forgotten as they are (NOISE_MULTIPLE). */
  private noise = 0;

  constructor(seed: TtftFit) {
    this.prior[0] = this.theta[0] = seed.baseMs;
    this.prior[1] = this.theta[1] = seed.msPerUnit;
    this.prior[2] = this.theta[2] = seed.msAtFullKv;
  }

  get observations(): number {
    return this.n;
  }

  get fit(): TtftFit {
    return { baseMs: this.theta[0], msPerUnit: this.theta[1], msAtFullKv: this.theta[2] };
  }

  predict(u: number, k: number): number {
    return this.theta[0] + this.theta[1] * u + this.theta[2] * k;
  }

  observe(u: number, k: number, ttftMs: number): void {
    if (![u, k, ttftMs].every(Number.isFinite) || u < 0 || k < 0 || ttftMs < 0) return;
    // The first N observations determine the fit (no clip, no shift rule: nothing to protect yet).
    if (this.n < N) this.update(u, k, ttftMs);
    else this.watchForShift(u, k, ttftMs);
    this.n++;
  }

  /** One observation, φ = [1, u, k], its miss clipped once the fit is determined; then solve. */
  private update(u: number, k: number, y: number): void {
    if (this.n >= N) {
      const predicted = this.predict(u, k);
      const clip = Math.max(INNOVATION_CLIP * Math.max(predicted, CLIP_FLOOR_MS), this.noiseBand);
      y = Math.max(predicted - clip, Math.min(predicted + clip, y));
      this.noise = FORGETTING * this.noise + (1 - FORGETTING) * Math.abs(y - predicted);
    }
    const { xx, xy, phi } = this;
    phi[0] = 1;
    phi[1] = u;
    phi[2] = k;
    for (let i = 0; i < N; i++) {
      xy[i] = FORGETTING * xy[i] + phi[i] * y;
      for (let j = 0; j < N; j++) xx[i * N + j] = FORGETTING * xx[i * N + j] + phi[i] * phi[j];
    }
    this.solve();
  }

  /**
   * θ = (Σ w φ φᵀ + SEED_WEIGHT I)⁻¹ (Σ w φ y + SEED_WEIGHT θ₀), with every parameter ≥ 0: one
   * that comes out negative is fixed at 0 and the rest solved again (at most N rounds).
   */
  private solve(): void {
    let free = (1 << N) - 1;
    for (let round = 0; round < N; round++) {
      this.solveFree(free);
      let negative = 0;
      for (let i = 0; i < N; i++) if (free & (1 << i) && this.theta[i] < 0) negative |= 1 << i;
      if (negative === 0) return;
      free &= ~negative;
      for (let i = 0; i < N; i++) if (!(free & (1 << i))) this.theta[i] = 0;
    }
  }

  /** The regularised normal equations over the parameters in `free` (the others are 0). */
  private solveFree(free: number): void {
    const { m, r, xx, xy, prior, theta } = this;
    for (let i = 0; i < N; i++) {
      for (let j = 0; j < N; j++) {
        const both = free & (1 << i) && free & (1 << j);
        m[i * N + j] = both ? xx[i * N + j] + (i === j ? SEED_WEIGHT : 0) : i === j ? 1 : 0;
      }
      r[i] = free & (1 << i) ? xy[i] + SEED_WEIGHT * prior[i] : 0;
    }
    // Gaussian elimination; the matrix is symmetric positive definite (the seed's weight on its
    // diagonal), so no pivoting is needed.
    for (let c = 0; c < N; c++) {
      const d = m[c * N + c];
      for (let row = c + 1; row < N; row++) {
        const f = m[row * N + c] / d;
        if (f === 0) continue;
        for (let j = c; j < N; j++) m[row * N + j] -= f * m[c * N + j];
        r[row] -= f * r[c];
      }
    }
    for (let c = N - 1; c >= 0; c--) {
      let v = r[c];
      for (let j = c + 1; j < N; j++) v -= m[c * N + j] * theta[j];
      theta[c] = v / m[c * N + c];
    }
  }

  /**
   * An observation once the fit is determined: an ordinary update, unless it misses by more than
   * SHIFT_TOLERANCE. Such a miss is held back with the run it starts or continues, so that the
   * run's clipped updates do not bend the fit it will scale; a run that breaks off is applied
   * then, as ordinary (clipped) updates, and one that reaches SHIFT_RUN scales the fit first.
   */
  private watchForShift(u: number, k: number, y: number): void {
    let sign = this.missSign(u, k, y);
    if (this.run.length > 0 && (sign !== this.runSign || !this.agreesWithRun(u, k, y))) {
      this.applyRun();
      sign = this.missSign(u, k, y);
    }
    if (sign === 0) {
      this.update(u, k, y);
      return;
    }
    this.runSign = sign;
    this.run.push([u, k, y]);
    if (this.run.length < SHIFT_RUN) return;
    const scale = this.runRatio();
    // θ is linear in (Σ w φ y, θ₀): scaling both scales the fit exactly, and what the fit
    // remembers of the old speed with it.
    for (let i = 0; i < N; i++) {
      this.theta[i] *= scale;
      this.prior[i] *= scale;
      this.xy[i] *= scale;
    }
    this.applyRun();
  }

  /** Observed ÷ predicted, both at least the clip floor (a zero cannot make a ratio 0 or ∞). */
  private ratio(u: number, k: number, y: number): number {
    return Math.max(y, CLIP_FLOOR_MS) / Math.max(this.predict(u, k), CLIP_FLOOR_MS);
  }

  /** The median ratio of the held run's observations (the fit is held while the run lasts). */
  private runRatio(): number {
    return median(this.run.map(([ru, rk, ry]) => this.ratio(ru, rk, ry)));
  }

  /** The observation misses by about as much as the held run does (within SHIFT_AGREEMENT). */
  private agreesWithRun(u: number, k: number, y: number): boolean {
    const r = this.ratio(u, k, y) / this.runRatio();
    return r <= SHIFT_AGREEMENT && r >= 1 / SHIFT_AGREEMENT;
  }

  /**
   * -1 or 1: the observation misses its prediction that way by more than SHIFT_TOLERANCE and by
   * more than the worker's noise (NOISE_MULTIPLE); else 0.
   */
  private missSign(u: number, k: number, y: number): number {
    const predicted = this.predict(u, k);
    if (predicted <= 0) return 0;
    const miss = y - predicted;
    const tolerance = Math.max(SHIFT_TOLERANCE * predicted, this.noiseBand);
    return Math.abs(miss) > tolerance ? Math.sign(miss) : 0;
  }

  /** A miss within this (ms) is the worker's noise (NOISE_MULTIPLE). */
  private get noiseBand(): number {
    return NOISE_MULTIPLE * this.noise;
  }

  /** The held run's observations, applied as ordinary updates; the run ends. */
  private applyRun(): void {
    const run = this.run;
    this.run = [];
    this.runSign = 0;
    for (const [ru, rk, ry] of run) this.update(ru, rk, ry);
  }
}

/** The middle value (the mean of the two middle ones for an even count): one stray does not move it. */
function median(xs: number[]): number {
  const sorted = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
