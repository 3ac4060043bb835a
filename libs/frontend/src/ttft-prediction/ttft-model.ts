/**
 * The time-to-first-token model of one worker (docs/architecture.md, "TTFT prediction"):
 *
 *     TTFT ≈ a + b × u,   u = (tokens ahead + own prompt tokens) / TOKEN_UNIT
 *
 * An engine with chunked prefill works through the prompt tokens queued before a request, then
 * the request's own, at about one step per `max_num_batched_tokens`; `a` is what a request pays
 * on an idle worker (the step it joins, the round trip), `b` the time per TOKEN_UNIT tokens to
 * prefill. Both are fitted online by recursive least squares with exponential forgetting, so a
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
 * Prompt tokens one step prefills per rank when the worker reports no `max_num_batched_tokens`:
 * the simulated worker's default, and vLLM's for online serving on a datacenter GPU.
 */
export const DEFAULT_BATCH_TOKENS = 8192;

/**
 * Forgetting factor λ: each observation weighs λ times the one after it, so the fit remembers
 * about 1 / (1 − λ) = 20 requests. Lower follows drift sooner and trusts noise more.
 */
export const FORGETTING = 0.95;

/**
 * Covariance of the seed (in units of one observation's weight): the seed counts as 1/10,000 of
 * an observation, so the first observation decides the fit along its direction and the seed
 * only fills in what no observation has shown yet. Also the bound on the covariance's trace per
 * parameter, so a direction the observations never excite cannot wind up under forgetting.
 */
export const SEED_COVARIANCE = 1e4;

/**
 * One observation moves the fit by at most this share of its prediction (the innovation is
 * clipped), so that one stalled request — a garbage collection, a lost packet — does not swing
 * it. Changes of speed are caught by the shift rule below instead.
 */
export const INNOVATION_CLIP = 0.5;

/** The clip never gets narrower than this, so a fit near zero can still grow. */
export const CLIP_FLOOR_MS = 1;

/**
 * A shift of speed: SHIFT_RUN observations in a row that miss their prediction by more than
 * SHIFT_TOLERANCE (relative), all in the same direction. The fit as it was before the run is
 * then scaled at once by the median of their ratios to its predictions (a slower or faster
 * worker scales every time alike; the median ignores one stray), instead of forgetting its way
 * there over tens of requests.
 */
export const SHIFT_TOLERANCE = 0.3;
export const SHIFT_RUN = 3;

/** The fitted parameters: TTFT ≈ `baseMs` + `msPerUnit` × u. */
export interface TtftFit {
  readonly baseMs: number;
  readonly msPerUnit: number;
}

/** The seed of a worker that steps `batchTokens` prompt tokens per rank. */
export function seedFit(batchTokens: number | undefined): TtftFit {
  const budget = batchTokens !== undefined && batchTokens > 0 ? batchTokens : DEFAULT_BATCH_TOKENS;
  return {
    baseMs: SEED_FIRST_STEP_MS,
    msPerUnit: (SEED_FULL_STEP_MS * TOKEN_UNIT) / budget,
  };
}

/** What the seed of a worker that steps `batchTokens` predicts for `u`; the same as seedFit's. */
export function seedPredictMs(batchTokens: number | undefined, u: number): number {
  const budget = batchTokens !== undefined && batchTokens > 0 ? batchTokens : DEFAULT_BATCH_TOKENS;
  return SEED_FIRST_STEP_MS + ((SEED_FULL_STEP_MS * TOKEN_UNIT) / budget) * u;
}

/** u of the model: the tokens a request waits for, itself included, in TOKEN_UNITs. */
export function workUnits(tokensAhead: number, promptTokens: number): number {
  return Math.max(0, tokensAhead + promptTokens) / TOKEN_UNIT;
}

/** One worker's fit: two parameters, their 2×2 covariance, and the run the shift rule watches. */
export class TtftModel {
  private a: number;
  private b: number;
  // P = [[p00, p01], [p01, p11]], symmetric.
  private p00 = SEED_COVARIANCE;
  private p01 = 0;
  private p11 = SEED_COVARIANCE;
  /** Observations of the current run of misses in one direction: [u, ttftMs] pairs. */
  private run: Array<readonly [number, number]> = [];
  private runSign = 0;
  private runStart: TtftFit;
  private n = 0;

  constructor(seed: TtftFit) {
    this.a = seed.baseMs;
    this.b = seed.msPerUnit;
    this.runStart = seed;
  }

  get observations(): number {
    return this.n;
  }

  get fit(): TtftFit {
    return { baseMs: this.a, msPerUnit: this.b };
  }

  predict(u: number): number {
    return this.a + this.b * u;
  }

  observe(u: number, ttftMs: number): void {
    if (!Number.isFinite(u) || !Number.isFinite(ttftMs) || u < 0 || ttftMs < 0) return;
    if (this.n > 0) this.watchForShift(u, ttftMs);
    this.update(u, ttftMs);
    this.n++;
  }

  /** One step of recursive least squares with forgetting, φ = [1, u]. */
  private update(u: number, y: number): void {
    const predicted = this.predict(u);
    let e = y - predicted;
    if (this.n > 0) {
      const clip = INNOVATION_CLIP * Math.max(predicted, CLIP_FLOOR_MS);
      e = Math.max(-clip, Math.min(clip, e));
    }
    // k = P φ / (λ + φᵀ P φ)
    const pf0 = this.p00 + this.p01 * u;
    const pf1 = this.p01 + this.p11 * u;
    const denom = FORGETTING + pf0 + pf1 * u;
    const k0 = pf0 / denom;
    const k1 = pf1 / denom;
    this.a = Math.max(0, this.a + k0 * e);
    this.b = Math.max(0, this.b + k1 * e);
    // P = (P − k φᵀ P) / λ, where φᵀ P = (P φ)ᵀ
    let p00 = (this.p00 - k0 * pf0) / FORGETTING;
    let p01 = (this.p01 - k0 * pf1) / FORGETTING;
    let p11 = (this.p11 - k1 * pf1) / FORGETTING;
    const trace = p00 + p11;
    if (trace > 2 * SEED_COVARIANCE) {
      const f = (2 * SEED_COVARIANCE) / trace;
      p00 *= f;
      p01 *= f;
      p11 *= f;
    }
    this.p00 = p00;
    this.p01 = p01;
    this.p11 = p11;
  }

  private watchForShift(u: number, y: number): void {
    const predicted = this.predict(u);
    const miss = predicted > 0 ? (y - predicted) / predicted : 0;
    const sign = Math.abs(miss) > SHIFT_TOLERANCE ? Math.sign(miss) : 0;
    if (sign === 0 || sign !== this.runSign) {
      this.run = [];
      // The fit as it was before the run: the run's own (clipped) updates bend its shape.
      this.runStart = { baseMs: this.a, msPerUnit: this.b };
    }
    this.runSign = sign;
    if (sign === 0) return;
    this.run.push([u, y]);
    if (this.run.length < SHIFT_RUN) return;
    const { baseMs, msPerUnit } = this.runStart;
    // Both sides at least the clip floor: a zero observation or fit cannot make a ratio 0 or ∞.
    const ratios = this.run.map(
      ([ru, ry]) => Math.max(ry, CLIP_FLOOR_MS) / Math.max(baseMs + msPerUnit * ru, CLIP_FLOOR_MS),
    );
    const scale = median(ratios);
    this.a = baseMs * scale;
    this.b = msPerUnit * scale;
    this.run = [];
    this.runSign = 0;
  }
}

/** The middle value (the mean of the two middle ones for an even count): one stray does not move it. */
function median(xs: number[]): number {
  const sorted = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
