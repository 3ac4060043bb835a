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

/** Does the rank exceed this configured threshold? False when it does not report the inputs. */
type BusyTerm = (rank: RankLoad, threshold: number) => boolean;

/** One term per threshold: a key added to THRESHOLD_SPECS without one does not compile. */
const BUSY_TERMS: { readonly [K in NumericKey]: BusyTerm } = {
  activeDecodeBlocks: (r, t) => r.kvTotalBlocks > 0 && r.activeDecodeBlocks / r.kvTotalBlocks > t,
  activePrefillTokens: (r, t) => r.activePrefillTokens > t,
  activePrefillTokensFrac: (r, t) =>
    r.maxNumBatchedTokens !== undefined &&
    r.activePrefillTokens > fracLimit(t, r.maxNumBatchedTokens),
  waitingRequests: (r, t) => r.numRequestsWaiting !== undefined && r.numRequestsWaiting > t,
};

/** In the table's order, so the first threshold that fires is the one the table lists first. */
const TERMS = NUMERIC_KEYS.map((key) => [key, BUSY_TERMS[key]] as const);

/**
 * Contract §5: a rank is busy when any configured threshold is exceeded (strict `>`). A
 * threshold that is not configured, or whose inputs the rank does not report, never fires.
 */
export function isRankBusy(rank: RankLoad, t: BusyThresholds): boolean {
  for (const [key, exceeds] of TERMS) {
    const threshold = t[key];
    if (threshold !== null && exceeds(rank, threshold)) return true;
  }
  return false;
}
