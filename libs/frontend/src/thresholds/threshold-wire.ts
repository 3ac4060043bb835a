import { BusyThresholds, ThresholdKey } from './busy-thresholds';

/** The snake_case keys of contract §3.2, and their internal names. */
export const WIRE_KEYS = {
  active_decode_blocks_threshold: 'activeDecodeBlocks',
  active_prefill_tokens_threshold: 'activePrefillTokens',
  active_prefill_tokens_threshold_frac: 'activePrefillTokensFrac',
} as const satisfies Record<string, ThresholdKey>;

export type WireKey = keyof typeof WIRE_KEYS;

export type WireThresholdValues = Record<WireKey, number | null>;

export function toWire(t: BusyThresholds): WireThresholdValues {
  return {
    active_decode_blocks_threshold: t.activeDecodeBlocks,
    active_prefill_tokens_threshold: t.activePrefillTokens,
    active_prefill_tokens_threshold_frac: t.activePrefillTokensFrac,
  };
}
