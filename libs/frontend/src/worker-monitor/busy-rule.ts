import { BusyThresholds, NUMERIC_KEYS, NumericKey } from '../thresholds/busy-thresholds';

/** The load numbers of one data-parallel rank, as last reported. */
export interface RankLoad {
  activeDecodeBlocks: number;
  kvTotalBlocks: number;
  activePrefillTokens: number;
  maxNumBatchedTokens: number | undefined;
  /** Requests queued in the engine; `undefined` when the rank does not report it. */
  numRequestsWaiting?: number | undefined;
}

/**
 * floor(F × max) as an operator means it: 0.29 × 100 is 29, although in binary floating point
 * the product is 28.999999999999996. A nudge far below one token absorbs the rounding error.
 */
export function fracLimit(frac: number, maxNumBatchedTokens: number): number {
  return Math.floor(frac * maxNumBatchedTokens + 1e-9);
}

/**
 * Does the rank exceed this configured threshold, times `scale`? False when it does not report
 * the inputs.
 */
type BusyTerm = (rank: RankLoad, threshold: number, scale: number) => boolean;

/** One term per threshold: a key added to THRESHOLD_SPECS without one does not compile. */
const BUSY_TERMS: { readonly [K in NumericKey]: BusyTerm } = {
  activeDecodeBlocks: (r, t, s) =>
    r.kvTotalBlocks > 0 && r.activeDecodeBlocks / r.kvTotalBlocks > t * s,
  activePrefillTokens: (r, t, s) => r.activePrefillTokens > t * s,
  activePrefillTokensFrac: (r, t, s) =>
    r.maxNumBatchedTokens !== undefined &&
    r.activePrefillTokens > fracLimit(t, r.maxNumBatchedTokens) * s,
  waitingRequests: (r, t, s) => r.numRequestsWaiting !== undefined && r.numRequestsWaiting > t * s,
};

/** In the table's order, so the first threshold that fires is the one the table lists first. */
const TERMS = NUMERIC_KEYS.map((key) => [key, BUSY_TERMS[key]] as const);

/**
 * docs/architecture.md#busy-rule: a rank is busy when any configured threshold is exceeded (strict `>`). A
 * threshold that is not configured, or whose inputs the rank does not report, never fires.
 * `scale` multiplies every limit: the registry judges a busy rank with `--busy-release-factor`
 * (hysteresis, docs/operations.md#hysteresis-and-dwell: it turns free only when every term is at most threshold × F). At 1 (the
 * default) each limit is the threshold itself, exactly.
 */
export function isRankBusy(rank: RankLoad, t: BusyThresholds, scale = 1): boolean {
  for (const [key, exceeds] of TERMS) {
    const threshold = t[key];
    if (threshold !== null && exceeds(rank, threshold, scale)) return true;
  }
  return false;
}
