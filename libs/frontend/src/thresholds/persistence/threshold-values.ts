export { noThresholds as isEmpty } from '../busy-thresholds';
export { toWire } from '../threshold-wire';
import { ModelThresholdEntity } from './entities/model-threshold.entity';
import { ThresholdPatch, ThresholdValues, WireThresholds } from './threshold.repository';

export const NO_VALUES: ThresholdValues = {
  activeDecodeBlocks: null,
  activePrefillTokens: null,
  activePrefillTokensFrac: null,
};

export function valuesOf(row: ModelThresholdEntity): ThresholdValues {
  return {
    activeDecodeBlocks: row.activeDecodeBlocks,
    activePrefillTokens: row.activePrefillTokens,
    activePrefillTokensFrac: row.activePrefillTokensFrac,
  };
}

/** Absent (or undefined) keys keep the stored value; `null` clears it; unknown keys are ignored. */
export function merge(before: ThresholdValues, patch: ThresholdPatch): ThresholdValues {
  const pick = (key: keyof ThresholdValues) =>
    patch[key] === undefined ? before[key] : patch[key];
  return {
    activeDecodeBlocks: pick('activeDecodeBlocks'),
    activePrefillTokens: pick('activePrefillTokens'),
    activePrefillTokensFrac: pick('activePrefillTokensFrac'),
  };
}

/** Reads a stored jsonb object defensively: every key present, `null` where none is stored. */
export function wireOf(stored: Partial<WireThresholds> | null): WireThresholds {
  return {
    active_decode_blocks_threshold: stored?.active_decode_blocks_threshold ?? null,
    active_prefill_tokens_threshold: stored?.active_prefill_tokens_threshold ?? null,
    active_prefill_tokens_threshold_frac: stored?.active_prefill_tokens_threshold_frac ?? null,
  };
}
