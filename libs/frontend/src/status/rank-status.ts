import { fracLimit, isRankBusy } from '../worker-monitor/busy-rule';
import { judgedLoad } from '../worker-monitor/reservations';
import { RankState } from '../worker-monitor/worker-entry';
import { NUMERIC_SPECS, NumericKey, OverThreshold } from '../config/threshold-keys';
import { BusyThresholds, NO_THRESHOLDS } from '../thresholds/busy-thresholds';
import { RankStatusDto } from './dto/status.dto';

/** The lowest prefill token count that is still not busy, or null when no prefill limit applies. */
export function prefillLimit(t: BusyThresholds, maxBatched: number | undefined): number | null {
  const limits: number[] = [];
  if (t.activePrefillTokens !== null) limits.push(t.activePrefillTokens);
  if (t.activePrefillTokensFrac !== null && maxBatched !== undefined) {
    limits.push(fracLimit(t.activePrefillTokensFrac, maxBatched));
  }
  return limits.length ? Math.min(...limits) : null;
}

/** `t` with only the thresholds that feed the rank's `<over>_over_threshold` flag. */
function only(t: BusyThresholds, over: OverThreshold): BusyThresholds {
  const out: Record<NumericKey, number | null> = { ...NO_THRESHOLDS };
  for (const s of NUMERIC_SPECS) if (s.status.over === over) out[s.key] = t[s.key];
  return { ...t, ...out };
}

/**
 * One rank for the status page. Which threshold fires is decided by the busy rule itself, run
 * on the same load (report plus reservations) with only the decode, only the prefill or only
 * the waiting-requests thresholds, so the page never disagrees with admission.
 */
export function rankStatus(
  dpRank: number,
  state: RankState | undefined,
  t: BusyThresholds,
  dpSize: number,
): RankStatusDto {
  if (!state) {
    return {
      dp_rank: dpRank,
      reported: false,
      active_decode_blocks: null,
      kv_total_blocks: null,
      kv_usage: null,
      active_prefill_tokens: null,
      prefill_source: null,
      max_num_batched_tokens: null,
      prefill_limit_tokens: prefillLimit(t, undefined),
      num_requests_waiting: null,
      reserved_decode_blocks: null,
      reserved_prefill_tokens: null,
      reserved_waiting_requests: null,
      shared_decode_blocks: null,
      shared_prefill_tokens: null,
      shared_waiting_requests: null,
      kv_over_threshold: false,
      prefill_over_threshold: false,
      waiting_over_threshold: false,
      busy: false,
    };
  }
  const judged = judgedLoad(state, dpSize);
  const over = (which: OverThreshold) => isRankBusy(judged, only(t, which));
  const reserved = state.reserved;
  return {
    dp_rank: dpRank,
    reported: true,
    active_decode_blocks: state.activeDecodeBlocks,
    kv_total_blocks: state.kvTotalBlocks,
    kv_usage: state.kvTotalBlocks > 0 ? state.activeDecodeBlocks / state.kvTotalBlocks : null,
    active_prefill_tokens: state.activePrefillTokens,
    prefill_source: state.prefillReported ? 'reported' : 'frontend',
    max_num_batched_tokens: state.maxNumBatchedTokens ?? null,
    prefill_limit_tokens: prefillLimit(t, state.maxNumBatchedTokens),
    num_requests_waiting: state.numRequestsWaiting ?? null,
    reserved_decode_blocks: reserved.decodeBlocks / dpSize,
    reserved_prefill_tokens: reserved.prefillTokens / dpSize,
    reserved_waiting_requests: reserved.waiting / dpSize,
    shared_decode_blocks: state.peers.decodeBlocks / dpSize,
    shared_prefill_tokens: state.peers.prefillTokens / dpSize,
    shared_waiting_requests: state.peers.waiting / dpSize,
    kv_over_threshold: over('kv'),
    prefill_over_threshold: over('prefill'),
    waiting_over_threshold: over('waiting'),
    busy: state.busyFor.standard,
  };
}
