import type { Buckets } from '../lib/prom-histogram';

/** Offered loads, as multiples of the round's measured capacity. */
export const LOADS = [0.5, 1, 2, 4];

/**
 * The TTFT objective, as a multiple of the unloaded TTFT p50 of the load's own request measured
 * at the start of the run: about two and a half engine steps that prefill a full 8,192-token
 * budget (docs/benchmarks.md, scenario 7, "The objective").
 */
export const OBJECTIVE_MULTIPLE = 10;

/**
 * A tighter objective for the wrong-refusal estimate, as the same multiple: about one and a half
 * full engine steps. Beside the thresholds of record the objective of record refuses (almost)
 * nothing of its own at 4×, so its refusals cannot be sampled; at this one it refuses on its own.
 */
export const TIGHT_MULTIPLE = 6;

/**
 * Share of its would-be refusals the tighter objective admits: all of them. Beside the thresholds
 * it would refuse about 1 % of the requests they leave it (a 5 % sample of that caught none in a
 * 6 s point), so judging every one adds about a tenth of capacity and no sampling error.
 */
export const TIGHT_SAMPLE_SHARE = 1;

/** Share of would-be refusals the sampling frontend admits to see whether they would have met it. */
export const SAMPLE_SHARE = 0.05;

/** The two-class runs at 4× capacity: the mix, and whether priority classes are on. */
export const CLASS_LOAD = 4;
export const CLASS_RUNS: Record<ClassRun, { mix: string; classes: boolean }> = {
  half: { mix: 'critical=0.5,sheddable=0.5', classes: true },
  'half-no-classes': { mix: 'critical=0.5,sheddable=0.5', classes: false },
  // Critical traffic alone is 0.8× capacity: classes should serve all of it.
  fifth: { mix: 'critical=0.2,sheddable=0.8', classes: true },
};

/**
 * The three admission policies compared: none, the static thresholds of record, and the TTFT
 * objective (the frontend predicts each request's TTFT and refuses when no worker can meet it).
 */
export type Policy = 'off' | 'static' | 'slo';
export const POLICIES: Policy[] = ['off', 'static', 'slo'];
export const POLICY_NAMES: Record<Policy, string> = {
  off: 'off',
  static: 'static thresholds',
  slo: 'TTFT objective',
};

export interface ClassFigures {
  arrivals: number;
  ok: number;
  rejected: number;
  rejection_ratio: number;
  goodput_rps: number;
  goodput_slo_rps: number;
}

/** What bench/tools/goodput-client.ts prints for one point (the figures scenario 7 reads). */
export interface ClientResult {
  window_arrivals: number;
  window_ok: number;
  window_rejected: number;
  window_errors: number;
  window_aborted: number;
  window_no_first_token: number;
  error_kinds: string[];
  goodput_rps: number;
  goodput_slo_rps: number;
  rejection_ratio: number;
  window_admitted: number;
  admitted_met: number;
  admitted_met_share: number | null;
  ttft_p50_ms: number | null;
  /** Over every admitted request of the window, the cut-off ones included. */
  ttft_p99_ms: number | null;
  ttft_p99_lower_bound: boolean;
  ttft_p99_ok_only_ms: number | null;
  latency_p50_ms: number | null;
  latency_p99_ms: number | null;
  /** Per priority class, when the client sent a mix of classes. */
  classes: Record<string, ClassFigures>;
}

/** What the frontend under test counted during the point (read from its /metrics). */
export interface FrontendCounts {
  /** Refusals by the objective (`sluice_frontend_slo_rejection_total`). */
  slo_rejections: number;
  /** Every refusal, over the same interval (`dynamo_frontend_model_rejection_total`). */
  rejections: number;
  /** |predicted − actual| TTFT of admitted requests, seconds. */
  prediction_error: Buckets;
  /** Would-be refusals admitted as a sample, by outcome. */
  sample: { met: number; missed: number; failed: number };
}

export interface PointResult extends ClientResult, FrontendCounts {
  /** Worker state in the window, from the reports: mean KV blocks in use / total. */
  kv_used_mean: number | null;
  /** Mean prompt tokens waiting for prefill (queued in the engines), summed over workers. */
  prefill_queued_mean: number | null;
}

export interface Point extends PointResult {
  load: number;
  policy: Policy;
  round: number;
  rate: number;
}

/**
 * A 4× point of the wrong-refusal estimate: `record`, the objective frontend with a share of its
 * would-be refusals admitted as a sample; `tight`, the same at the tighter objective; `tight-static`,
 * the static thresholds judged by the tighter objective, for comparison.
 */
export type SampleKind = 'record' | 'tight' | 'tight-static' | 'tight-enforced';
export interface SamplePoint extends PointResult {
  kind: SampleKind;
  round: number;
  rate: number;
}

/** A two-class run: which mix, sent to which configuration. */
export type ClassRun = 'half' | 'half-no-classes' | 'fifth';
export interface ClassPoint {
  run: ClassRun;
  round: number;
  rate: number;
  capacity: number;
  goodput_rps: number;
  classes: Record<string, ClassFigures>;
}

/** How the run went, for the method notes. */
export interface RunInfo {
  durationS: number;
  warmupS: number;
  drainS: number;
  rounds: number;
  quick: boolean;
  shedding: string;
  /** The objective policy's flags beside `--ttft-slo-ms`. */
  objectiveFlags: string;
  objectiveMs: number;
  objectiveMultiple: number;
  /** The tighter objective of the wrong-refusal estimate, and its multiple. */
  tightMs: number;
  tightMultiple: number;
  tightSampleShare: number;
  /** Unloaded TTFT p50 the objective is a multiple of, and how many requests it is of. */
  unloadedP50Ms: number;
  unloadedN: number;
  sampleShare: number;
  capacity: number;
  capacities: number[];
}
