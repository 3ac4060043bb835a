/**
 * The real-engine scenario's admission settings, each one per-model `/busy_threshold` write
 * (docs/api.md) on the frontend that runs it.
 */

/** The three compared at every load: shedding off, static thresholds, TTFT objective. */
export const POLICIES = ['off', 'static', 'objective'] as const;

/**
 * An A/A control run beside them at every load: the static policy again, on a frontend of its
 * own, left out of "the best". What the figures give it is what they give a policy identical to
 * one of the three: the noise a target on them must clear.
 */
export const CONTROL = 'static again';

/** Every frontend of the rounds, one per subject. */
export const SUBJECTS = [...POLICIES, CONTROL] as const;

/**
 * Settings compared once at 4x (full runs): the objective without thresholds, busy at 0.7 of the
 * slots or any queued request (3 of 4 slots: the engine is never full), at every slot taken or
 * any queued request (`static`), at every slot taken only, at a queued request only.
 */
export const SETTINGS = [
  'objective alone',
  'decode 0.7 + waiting 0',
  'decode 0.9 + waiting 0',
  'decode 0.9',
  'waiting 0',
] as const;

export type Policy = (typeof SUBJECTS)[number] | (typeof SETTINGS)[number];

interface Values {
  decode?: number;
  waiting?: number;
  objective?: boolean;
}

/**
 * What each setting configures; `static` and `objective` are the ones docs/engines.md advises:
 * busy when every slot is taken (any decode threshold from (slots - 1) / slots up to 1) or a
 * request waits for one.
 */
const STATIC: Values = { decode: 0.9, waiting: 0 };
const VALUES: Record<Exclude<Policy, 'off'>, Values> = {
  static: STATIC,
  objective: { ...STATIC, objective: true },
  // The A/A control is the static policy itself, so the two cannot drift apart.
  [CONTROL]: STATIC,
  'decode 0.7 + waiting 0': { decode: 0.7, waiting: 0 },
  'decode 0.9 + waiting 0': { decode: 0.9, waiting: 0 },
  'decode 0.9': { decode: 0.9 },
  'waiting 0': { waiting: 0 },
  'objective alone': { objective: true },
};

/** The `/busy_threshold` body that puts `policy` in force for `model`. */
export function policyBody(
  policy: Policy,
  model: string,
  objectiveMs: number,
): Record<string, unknown> {
  const v: Values = policy === 'off' ? {} : VALUES[policy];
  return {
    model,
    admission_control: policy === 'off' ? 'none' : 'token-capacity',
    active_decode_blocks_threshold: v.decode ?? null,
    active_prefill_tokens_threshold: null,
    active_prefill_tokens_threshold_frac: null,
    waiting_requests_threshold: v.waiting ?? null,
    ttft_slo_ms: v.objective ? objectiveMs : null,
  };
}

/** The flags of `policy` as an operator would give them at start. */
export function policyFlags(policy: Policy): string {
  if (policy === 'off') return '--admission-control none';
  const v = VALUES[policy];
  return [
    '--admission-control token-capacity',
    v.decode === undefined ? '' : `--active-decode-blocks-threshold ${v.decode}`,
    v.waiting === undefined ? '' : `--waiting-requests-threshold ${v.waiting}`,
    v.objective ? '--ttft-slo-ms OBJECTIVE' : '',
  ]
    .filter(Boolean)
    .join(' ');
}
