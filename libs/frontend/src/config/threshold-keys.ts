/**
 * The per-model busy thresholds, one entry each; every place that lists them is derived from here:
 * - `key`: the internal name (config, ThresholdsService, the entity's property);
 * - `flag`: the frontend flag holding its global default (config/frontend-flags.ts);
 * - `wire`: the snake_case name of contract §3.2 and §5 — JSON field of the admin API and the
 *   status page, key in the audit row's `before`/`after`, `model_thresholds` column;
 * - `range`: what the flag, the API (class-validator) and the column's CHECK accept;
 * - `column`: the column's type; `check`: its CHECK is named `CHK_model_thresholds_<check>`;
 * - `example`: the OpenAPI example in POST /busy_threshold, `exampleInForce` in the answers;
 * - `status`: the status page's label and CSS class, and which of a rank's `<over>_over_threshold`
 *   flags it feeds.
 * A new threshold is one entry here, a migration adding its column, and its busy term
 * (worker-monitor/busy-rule.ts, which fails to compile without one).
 */
export const THRESHOLD_SPECS = [
  {
    // Busy when active_decode_blocks / kv_total_blocks exceeds this.
    key: 'activeDecodeBlocks',
    flag: 'active-decode-blocks-threshold',
    wire: 'active_decode_blocks_threshold',
    range: { min: 0, max: 1, integer: false },
    column: 'double precision',
    check: 'decode',
    example: 0.85,
    exampleInForce: 0.85,
    status: { label: 'decode threshold', css: 'decode', over: 'kv' },
  },
  {
    // Busy when active_prefill_tokens exceeds this.
    key: 'activePrefillTokens',
    flag: 'active-prefill-tokens-threshold',
    wire: 'active_prefill_tokens_threshold',
    range: { min: 0, integer: true },
    column: 'bigint',
    check: 'prefill',
    example: 4096,
    exampleInForce: null,
    status: { label: 'prefill tokens threshold', css: 'prefill', over: 'prefill' },
  },
  {
    // Busy when active_prefill_tokens exceeds floor(F x max_num_batched_tokens).
    key: 'activePrefillTokensFrac',
    flag: 'active-prefill-tokens-threshold-frac',
    wire: 'active_prefill_tokens_threshold_frac',
    range: { min: 0, integer: false },
    column: 'double precision',
    check: 'prefill_frac',
    example: 1.5,
    exampleInForce: null,
    status: { label: 'prefill frac threshold', css: 'frac', over: 'prefill' },
  },
  {
    // Busy when num_requests_waiting (requests queued in the engine) exceeds this.
    key: 'waitingRequests',
    flag: 'waiting-requests-threshold',
    wire: 'waiting_requests_threshold',
    range: { min: 0, integer: true },
    column: 'bigint',
    check: 'waiting',
    example: 8,
    exampleInForce: null,
    status: { label: 'waiting requests threshold', css: 'waiting', over: 'waiting' },
  },
] as const satisfies readonly ThresholdSpecShape[];

/** What every entry must give; `as const` above keeps each entry's literal names. */
export interface ThresholdSpecShape {
  readonly key: string;
  readonly flag: string;
  readonly wire: string;
  readonly range: { readonly min: number; readonly max?: number; readonly integer: boolean };
  readonly column: 'double precision' | 'bigint';
  readonly check: string;
  readonly example: number;
  readonly exampleInForce: number | null;
  readonly status: {
    readonly label: string;
    readonly css: string;
    readonly over: 'kv' | 'prefill' | 'waiting';
  };
}

export type ThresholdSpec = (typeof THRESHOLD_SPECS)[number];
export type ThresholdKey = ThresholdSpec['key'];
export type ThresholdFlag = ThresholdSpec['flag'];
export type WireKey = ThresholdSpec['wire'];
/** A rank's status flags: `kv_over_threshold`, `prefill_over_threshold`, ... */
export type OverThreshold = ThresholdSpec['status']['over'];

/** One value per threshold; `null` = not configured (never fires) or, stored, no per-model value. */
export type ThresholdValues = { readonly [K in ThresholdKey]: number | null };

export const THRESHOLD_KEYS: readonly ThresholdKey[] = THRESHOLD_SPECS.map((s) => s.key);

/** Every threshold unset. */
export const NO_THRESHOLDS: ThresholdValues = Object.freeze(
  Object.fromEntries(THRESHOLD_SPECS.map((s) => [s.key, null])) as Record<ThresholdKey, null>,
);
