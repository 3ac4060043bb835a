import { fracLimit, isRankBusy } from '../monitor/busy-rule';
import { RankState } from '../monitor/worker-entry';
import { BusyThresholds } from '../thresholds/busy-thresholds';
import { RankStatusDto } from './dto/status.dto';

const NONE = { activeDecodeBlocks: null, activePrefillTokens: null, activePrefillTokensFrac: null };

/** The lowest prefill token count that is still not busy, or null when no prefill limit applies. */
export function prefillLimit(t: BusyThresholds, maxBatched: number | undefined): number | null {
  const limits: number[] = [];
  if (t.activePrefillTokens !== null) limits.push(t.activePrefillTokens);
  if (t.activePrefillTokensFrac !== null && maxBatched !== undefined) {
    limits.push(fracLimit(t.activePrefillTokensFrac, maxBatched));
  }
  return limits.length ? Math.min(...limits) : null;
}

/**
 * One rank for the status page. Which threshold fires is decided by the busy rule itself, run
 * with only the decode or only the prefill thresholds, so the page never disagrees with admission.
 */
export function rankStatus(
  dpRank: number,
  state: RankState | undefined,
  t: BusyThresholds,
): RankStatusDto {
  if (!state) {
    return {
      dp_rank: dpRank,
      reported: false,
      active_decode_blocks: null,
      kv_total_blocks: null,
      kv_usage: null,
      active_prefill_tokens: null,
      max_num_batched_tokens: null,
      prefill_limit_tokens: prefillLimit(t, undefined),
      kv_over_threshold: false,
      prefill_over_threshold: false,
      busy: false,
    };
  }
  const decodeOnly = { ...NONE, activeDecodeBlocks: t.activeDecodeBlocks };
  const prefillOnly = { ...t, activeDecodeBlocks: null };
  return {
    dp_rank: dpRank,
    reported: true,
    active_decode_blocks: state.activeDecodeBlocks,
    kv_total_blocks: state.kvTotalBlocks,
    kv_usage: state.kvTotalBlocks > 0 ? state.activeDecodeBlocks / state.kvTotalBlocks : null,
    active_prefill_tokens: state.activePrefillTokens,
    max_num_batched_tokens: state.maxNumBatchedTokens ?? null,
    prefill_limit_tokens: prefillLimit(t, state.maxNumBatchedTokens),
    kv_over_threshold: isRankBusy(state, decodeOnly),
    prefill_over_threshold: isRankBusy(state, prefillOnly),
    busy: state.busy,
  };
}
