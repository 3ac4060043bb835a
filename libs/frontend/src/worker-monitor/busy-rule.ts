import { BusyThresholds } from '../thresholds/busy-thresholds';

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
 * Contract §5: a rank is busy when any configured threshold is exceeded (strict `>`). A
 * threshold that is not configured, or whose inputs the rank does not report, never fires.
 */
export function isRankBusy(rank: RankLoad, t: BusyThresholds): boolean {
  if (
    t.activeDecodeBlocks !== null &&
    rank.kvTotalBlocks > 0 &&
    rank.activeDecodeBlocks / rank.kvTotalBlocks > t.activeDecodeBlocks
  ) {
    return true;
  }
  if (t.activePrefillTokens !== null && rank.activePrefillTokens > t.activePrefillTokens) {
    return true;
  }
  if (
    t.activePrefillTokensFrac !== null &&
    rank.maxNumBatchedTokens !== undefined &&
    rank.activePrefillTokens > fracLimit(t.activePrefillTokensFrac, rank.maxNumBatchedTokens)
  ) {
    return true;
  }
  return (
    t.waitingRequests !== null &&
    rank.numRequestsWaiting !== undefined &&
    rank.numRequestsWaiting > t.waitingRequests
  );
}
