/** How the busy rule is applied (docs/configuration.md, docs/operations.md#rolling-out-shedding): refuse, count only (`shadow`), or neither. */
export const ADMISSION_CONTROLS = ['token-capacity', 'shadow', 'none'] as const;
export type AdmissionControl = (typeof ADMISSION_CONTROLS)[number];

/**
 * The per-model keys of `/busy_threshold`, one entry each; every place that lists them is derived
 * from here. Most are busy thresholds (numbers); a key may also be one of a few words (`kind:
 * 'enum'`, e.g. `admission_control`). Every entry gives:
 * - `key`: the internal name (config, ThresholdsService, the entity's property);
 * - `flag`: the frontend flag holding its global default (generated in config/frontend-flags.ts);
 * - `wire`: the snake_case name of docs/api.md#busy-thresholds, docs/architecture.md#busy-rule and docs/operations.md#rolling-out-shedding — JSON field of the admin API and the
 *   status page, key in the audit row's `before`/`after`, `model_thresholds` column;
 * - a number: `range`, what the flag, the API (class-validator) and the column's CHECK accept
 *   (a busy threshold has no `kind`; `kind: 'objective'` is a number outside the busy rule, e.g.
 *   `ttft_slo_ms`, with its own `help`); a word: `values`, the same for the words allowed, and `default`, the flag's default;
 * - `column`: the column's type; `check`: its CHECK is named `CHK_model_thresholds_<check>`;
 * - `example`: the OpenAPI example in POST /busy_threshold, `exampleInForce` in the answers;
 * - `status`: the status page's label and CSS class, and (a threshold) which of a rank's
 *   `<over>_over_threshold` flags it feeds.
 * A new key is one entry here and a migration adding its column; a new threshold also needs its
 * busy term (worker-monitor/busy-rule.ts, which fails to compile without one).
 */
export const THRESHOLD_SPECS = [
  {
    key: 'activeDecodeBlocks',
    flag: 'active-decode-blocks-threshold',
    wire: 'active_decode_blocks_threshold',
    range: { min: 0, max: 1, integer: false },
    help: 'a rank is busy when active_decode_blocks / kv_total_blocks > F (0 to 1)',
    column: 'double precision',
    check: 'decode',
    example: 0.85,
    exampleInForce: 0.85,
    status: { label: 'decode threshold', css: 'decode', over: 'kv' },
  },
  {
    key: 'activePrefillTokens',
    flag: 'active-prefill-tokens-threshold',
    wire: 'active_prefill_tokens_threshold',
    range: { min: 0, integer: true },
    help: 'a rank is busy when active_prefill_tokens > N',
    column: 'bigint',
    check: 'prefill',
    example: 4096,
    exampleInForce: null,
    status: { label: 'prefill tokens threshold', css: 'prefill', over: 'prefill' },
  },
  {
    key: 'activePrefillTokensFrac',
    flag: 'active-prefill-tokens-threshold-frac',
    wire: 'active_prefill_tokens_threshold_frac',
    range: { min: 0, integer: false },
    help:
      'a rank is busy when active_prefill_tokens > floor(F x max_num_batched_tokens) ' +
      '(ranks that report max_num_batched_tokens only)',
    column: 'double precision',
    check: 'prefill_frac',
    example: 1.5,
    exampleInForce: null,
    status: { label: 'prefill frac threshold', css: 'frac', over: 'prefill' },
  },
  {
    key: 'waitingRequests',
    flag: 'waiting-requests-threshold',
    wire: 'waiting_requests_threshold',
    range: { min: 0, integer: true },
    help: 'a rank is busy when num_requests_waiting (requests queued in the engine) > N',
    column: 'bigint',
    check: 'waiting',
    example: 8,
    exampleInForce: null,
    status: { label: 'waiting requests threshold', css: 'waiting', over: 'waiting' },
  },
  {
    // How the busy rule is applied to the model (docs/operations.md#rolling-out-shedding): refuse, only count, or neither.
    kind: 'enum',
    key: 'admissionControl',
    flag: 'admission-control',
    wire: 'admission_control',
    values: ADMISSION_CONTROLS,
    default: 'none',
    help:
      'token-capacity: reject when every worker is busy; shadow: count what would be ' +
      'rejected, admit everything; none: admit everything (per model: admin API)',
    column: 'text',
    check: 'admission_control',
    example: 'shadow',
    exampleInForce: 'token-capacity',
    status: { label: 'admission control', css: 'admission' },
  },
  {
    // The TTFT objective (docs/operations.md#ttft-objective): refuse when every free worker's predicted time to first
    // token exceeds it, route to the lowest prediction otherwise. Not a busy threshold.
    kind: 'objective',
    key: 'ttftSloMs',
    flag: 'ttft-slo-ms',
    wire: 'ttft_slo_ms',
    range: { min: 1, integer: true },
    help:
      'TTFT objective in ms: refuse when no free worker is predicted to meet it, route to ' +
      'the lowest prediction (per model: admin API); unset: off',
    column: 'bigint',
    check: 'ttft_slo',
    example: 500,
    exampleInForce: null,
    status: { label: 'TTFT objective (ms)', css: 'ttft' },
  },
] as const satisfies readonly ThresholdSpecShape[];

/** A busy threshold: a number, `null` = not configured. */
export interface NumericSpecShape {
  readonly kind?: 'number';
  readonly key: string;
  readonly flag: string;
  readonly wire: string;
  readonly range: { readonly min: number; readonly max?: number; readonly integer: boolean };
  /** The flag's help line: when the threshold makes a rank busy. */
  readonly help: string;
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

/**
 * A number that is not a busy threshold (it has no term in the busy rule): validated, stored and
 * scaled per priority class like one. `ttft_slo_ms` is one.
 */
export interface ObjectiveSpecShape {
  readonly kind: 'objective';
  readonly key: string;
  readonly flag: string;
  readonly wire: string;
  readonly range: { readonly min: number; readonly max?: number; readonly integer: boolean };
  /** The flag's help line. */
  readonly help: string;
  readonly column: 'double precision' | 'bigint';
  readonly check: string;
  readonly example: number;
  readonly exampleInForce: number | null;
  readonly status: { readonly label: string; readonly css: string };
}

/** A key whose value is one of a few words, stored as text with a CHECK naming them. */
export interface EnumSpecShape {
  readonly kind: 'enum';
  readonly key: string;
  readonly flag: string;
  readonly wire: string;
  readonly values: readonly string[];
  /** The flag's default; `null`: unset unless given. */
  readonly default: string | null;
  /** The flag's help line. */
  readonly help: string;
  readonly column: 'text';
  readonly check: string;
  readonly example: string;
  readonly exampleInForce: string | null;
  readonly status: { readonly label: string; readonly css: string };
}

/** What every entry must give; `as const` above keeps each entry's literal names. */
export type ThresholdSpecShape = NumericSpecShape | ObjectiveSpecShape | EnumSpecShape;

export function isEnumSpec(spec: ThresholdSpecShape): spec is EnumSpecShape {
  return spec.kind === 'enum';
}

/** A busy threshold: a number with a term in the busy rule. */
export function isBusySpec(spec: ThresholdSpecShape): spec is NumericSpecShape {
  return spec.kind === undefined || spec.kind === 'number';
}

export type ThresholdSpec = (typeof THRESHOLD_SPECS)[number];
type EnumSpec = Extract<ThresholdSpec, { kind: 'enum' }>;
type ObjectiveSpec = Extract<ThresholdSpec, { kind: 'objective' }>;
type NumericSpec = Exclude<ThresholdSpec, EnumSpec | ObjectiveSpec>;
export type ThresholdKey = ThresholdSpec['key'];
/** The keys of busy thresholds (numbers), each with a term of the busy rule. */
export type NumericKey = NumericSpec['key'];
export type ThresholdFlag = ThresholdSpec['flag'];
export type WireKey = ThresholdSpec['wire'];
/** A rank's status flags: `kv_over_threshold`, `prefill_over_threshold`, ... */
export type OverThreshold = NumericSpec['status']['over'];

/** The value an entry takes: a number, or one of its words. */
export type ValueOf<S> = S extends { readonly values: readonly (infer V)[] } ? V : number;
/** Any key's value, for code that handles every key alike. */
export type ThresholdValue = number | string;

/**
 * One value per key; `null` = not configured (a threshold never fires) or, stored, no per-model
 * value.
 */
export type ThresholdValues = { readonly [S in ThresholdSpec as S['key']]: ValueOf<S> | null };
/** The same with the wire names (docs/api.md#busy-thresholds). */
export type WireThresholdValues = { [S in ThresholdSpec as S['wire']]: ValueOf<S> | null };

export const THRESHOLD_KEYS: readonly ThresholdKey[] = THRESHOLD_SPECS.map((s) => s.key);

/** The busy thresholds alone (the numeric entries with a busy term), in the table's order. */
export const NUMERIC_SPECS = THRESHOLD_SPECS.filter((s): s is NumericSpec => isBusySpec(s));
export const NUMERIC_KEYS: readonly NumericKey[] = NUMERIC_SPECS.map((s) => s.key);

/**
 * Every number a priority class scales by its factor (docs/security.md#priority-classes-who-may-set-x-sluice-priority): the busy thresholds and
 * the objectives (`ttft_slo_ms`: critical's objective is looser, sheddable's tighter).
 */
export const SCALED_SPECS = THRESHOLD_SPECS.filter(
  (s): s is NumericSpec | ObjectiveSpec => !isEnumSpec(s),
);

/** Every key unset. */
export const NO_THRESHOLDS: ThresholdValues = Object.freeze(
  Object.fromEntries(THRESHOLD_SPECS.map((s) => [s.key, null])) as Record<ThresholdKey, null>,
);
