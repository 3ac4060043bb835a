/**
 * The per-model busy thresholds, one entry each: the internal key, the frontend flag (global
 * default), the snake_case name of contract §3.2 (also the `model_thresholds` column and the key
 * in the audit row's `before`/`after`), and the range the flag and the API accept. A new
 * threshold is one entry here, a migration adding its column, its DTO fields and its busy term.
 */
export const THRESHOLD_SPECS = [
  {
    key: 'activeDecodeBlocks',
    flag: 'active-decode-blocks-threshold',
    wire: 'active_decode_blocks_threshold',
    range: { min: 0, max: 1, integer: false },
  },
  {
    key: 'activePrefillTokens',
    flag: 'active-prefill-tokens-threshold',
    wire: 'active_prefill_tokens_threshold',
    range: { min: 0, integer: true },
  },
  {
    key: 'activePrefillTokensFrac',
    flag: 'active-prefill-tokens-threshold-frac',
    wire: 'active_prefill_tokens_threshold_frac',
    range: { min: 0, integer: false },
  },
  {
    key: 'waitingRequests',
    flag: 'waiting-requests-threshold',
    wire: 'waiting_requests_threshold',
    range: { min: 0, integer: true },
  },
] as const;

export type ThresholdSpec = (typeof THRESHOLD_SPECS)[number];
export type ThresholdKey = ThresholdSpec['key'];
export type ThresholdFlag = ThresholdSpec['flag'];
export type WireKey = ThresholdSpec['wire'];

/** One value per threshold; `null` = not configured (never fires) or, stored, no per-model value. */
export type ThresholdValues = { readonly [K in ThresholdKey]: number | null };

export const THRESHOLD_KEYS: readonly ThresholdKey[] = THRESHOLD_SPECS.map((s) => s.key);

/** Every threshold unset. */
export const NO_THRESHOLDS: ThresholdValues = Object.freeze(
  Object.fromEntries(THRESHOLD_SPECS.map((s) => [s.key, null])) as Record<ThresholdKey, null>,
);
