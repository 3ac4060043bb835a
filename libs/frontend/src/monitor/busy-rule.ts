import { BusyThresholds } from '../thresholds/busy-thresholds';

/** The load numbers of one data-parallel rank, as last reported. */
export interface RankLoad {
  activeDecodeBlocks: number;
  kvTotalBlocks: number;
  activePrefillTokens: number;
  maxNumBatchedTokens: number | undefined;
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
  return (
    t.activePrefillTokensFrac !== null &&
    rank.maxNumBatchedTokens !== undefined &&
    rank.activePrefillTokens > Math.floor(t.activePrefillTokensFrac * rank.maxNumBatchedTokens)
  );
}
