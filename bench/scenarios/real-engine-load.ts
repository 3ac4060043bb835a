/**
 * The real-engine scenario's load: open-loop arrivals of streamed completions against one
 * frontend in front of the real llama-server, and what they met. In-process on the bench's own
 * core: at tens of requests a second a fetch costs nothing beside the engine.
 */
import { CompletionOutcome, LlamaServer, sleep, streamCompletion } from '@sluice/testkit';
import { seededRandom } from '../../apps/loadgen/src/prompt.builder';

/** Every request of the scenario: a short prompt and a fixed answer length. */
export interface RequestShape {
  readonly model: string;
  readonly promptWords: number;
  readonly maxTokens: number;
}

export interface SliceSpec extends RequestShape {
  readonly url: string;
  readonly rate: number;
  readonly durationS: number;
  /** Arrivals before this are load, not measured. */
  readonly warmupS: number;
  /** After the last arrival, requests still running are given up after this long. */
  readonly drainS: number;
  readonly objectiveMs: number;
  readonly seed: number;
  readonly llama: LlamaServer;
}

/** What one slice of load met: counts and raw samples, pooled with other slices by `pool`. */
export interface Slice {
  readonly arrivals: number;
  readonly admitted: number;
  readonly refused: number;
  readonly failed: number;
  /** Arrivals in the window whose first token met the objective. */
  readonly met: number;
  readonly windowS: number;
  /** Time to first token of each admitted request (see `PointResult.ttftP50`). */
  readonly ttfts: readonly number[];
  /** Slots processing, sampled in the window. */
  readonly busy: readonly number[];
  readonly deferredMax: number;
}

/** A policy's figures at one load: its slices pooled. */
export interface PointResult {
  readonly arrivals: number;
  readonly admitted: number;
  readonly refused: number;
  /** Admitted requests that failed (an error answer), not counting those given up at the end. */
  readonly failed: number;
  /** Requests per second, counted by arrival in the window, whose first token met the objective. */
  readonly goodput: number;
  /**
   * Time to first token of the admitted requests; one given up before its first token counts
   * with the time it waited (a lower bound), so a queue that never drains shows.
   */
  readonly ttftP50: number | null;
  readonly ttftP99: number | null;
  /** Mean slots processing and most requests deferred in the engine, sampled in the window. */
  readonly slotsBusy: number;
  readonly deferredMax: number;
}

/** Slices pooled: counts and samples added up, goodput over their windows together. */
export function pool(slices: readonly Slice[]): PointResult {
  const sum = (f: (x: Slice) => number) => slices.reduce((a, x) => a + f(x), 0);
  const ttfts = slices.flatMap((x) => x.ttfts);
  const windowS = sum((x) => x.windowS);
  return {
    arrivals: sum((x) => x.arrivals),
    admitted: sum((x) => x.admitted),
    refused: sum((x) => x.refused),
    failed: sum((x) => x.failed),
    goodput: windowS > 0 ? sum((x) => x.met) / windowS : NaN,
    ttftP50: percentile(ttfts, 0.5),
    ttftP99: percentile(ttfts, 0.99),
    slotsBusy: mean(slices.flatMap((x) => x.busy)) ?? 0,
    deferredMax: Math.max(0, ...slices.map((x) => x.deferredMax)),
  };
}

/** Poisson arrival times (seconds) at `rate` over `durationS`, the same for the same seed. */
export function arrivals(rate: number, durationS: number, seed: number): number[] {
  const next = seededRandom(seed);
  const out: number[] = [];
  for (let t = -Math.log(1 - next()) / rate; t < durationS; t += -Math.log(1 - next()) / rate) {
    out.push(t);
  }
  return out;
}

/** Samples the engine's own gauges until stopped. */
function sampleEngine(llama: LlamaServer, fromMs: number, toMs: number) {
  const busy: number[] = [];
  let deferredMax = 0;
  let stopped = false;
  const t0 = performance.now();
  const loop = (async () => {
    while (!stopped) {
      const t = performance.now() - t0;
      if (t >= fromMs && t < toMs) {
        const load = await llama.load().catch(() => undefined);
        if (load) {
          busy.push(load.processing);
          deferredMax = Math.max(deferredMax, load.deferred);
        }
      }
      await sleep(200);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return { busy, deferredMax };
  };
}

export async function runSlice(s: SliceSpec): Promise<Slice> {
  const times = arrivals(s.rate, s.durationS, s.seed);
  const giveUp = new AbortController();
  const stopSampling = sampleEngine(s.llama, s.warmupS * 1000, s.durationS * 1000);
  const t0 = performance.now();
  const sent: Array<Promise<CompletionOutcome>> = [];
  for (const [i, at] of times.entries()) {
    const wait = t0 + at * 1000 - performance.now();
    if (wait > 0) await sleep(wait);
    sent.push(streamCompletion(s.url, { ...s, tag: `r${s.seed} ${i}`, signal: giveUp.signal }));
  }
  const timer = setTimeout(() => giveUp.abort(), s.drainS * 1000);
  const outcomes = await Promise.all(sent);
  clearTimeout(timer);
  const engine = await stopSampling();
  const measured = outcomes.filter((_, i) => times[i] >= s.warmupS);
  const admitted = measured.filter((o) => o.status !== 503 && o.status !== 429);
  const gaveUp = (o: CompletionOutcome) => o.error !== null && giveUp.signal.aborted;
  return {
    arrivals: measured.length,
    admitted: admitted.length,
    refused: measured.length - admitted.length,
    failed: admitted.filter((o) => !gaveUp(o) && (o.status !== 200 || o.error !== null)).length,
    met: admitted.filter((o) => o.ttftMs !== null && o.ttftMs <= s.objectiveMs).length,
    windowS: s.durationS - s.warmupS,
    ttfts: admitted.map((o) => o.ttftMs ?? o.totalMs),
    ...engine,
  };
}

/** Completions a second of `clients` closed-loop clients, counted after `warmupS`. */
export async function closedLoopRate(
  url: string,
  shape: RequestShape,
  clients: number,
  durationS: number,
  warmupS: number,
): Promise<number> {
  const t0 = performance.now();
  const end = t0 + durationS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; performance.now() < end; i++) {
        const o = await streamCompletion(url, { ...shape, tag: `cap ${c} ${i}` });
        if (o.status !== 200)
          throw new Error(`capacity probe: ${o.status} ${o.message ?? o.error}`);
        if (performance.now() - t0 >= warmupS * 1000 && performance.now() < end) done++;
      }
    }),
  );
  return done / (durationS - warmupS);
}

/** One request at a time: time to first token and whole answer, p50 of `n`. */
export async function unloaded(
  url: string,
  shape: RequestShape,
  n: number,
): Promise<{ ttftMs: number; totalMs: number }> {
  const ttft: number[] = [];
  const total: number[] = [];
  for (let i = 0; i < n; i++) {
    const o = await streamCompletion(url, { ...shape, tag: `alone ${i}` });
    if (o.status !== 200 || o.ttftMs === null) throw new Error(`unloaded probe: ${o.status}`);
    ttft.push(o.ttftMs);
    total.push(o.totalMs);
  }
  return { ttftMs: percentile(ttft, 0.5) ?? NaN, totalMs: percentile(total, 0.5) ?? NaN };
}

export function percentile(xs: readonly number[], p: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
}

export function mean(xs: readonly number[]): number | null {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
}
