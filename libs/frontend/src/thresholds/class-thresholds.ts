import { PerClass, PriorityFactors } from '../config/priority';
import { SCALED_SPECS } from '../config/threshold-keys';
import { AnyThresholds, BusyThresholds } from './busy-thresholds';

/** The thresholds each priority class is judged with, for one model. */
export type ClassThresholds = PerClass<BusyThresholds>;

/**
 * A threshold × a class's factor (docs/security.md#priority-classes-who-may-set-x-sluice-priority): an integer threshold (prefill tokens, waiting
 * requests) is floored, `floor(T × F)`, so the scaled limit is still a count the rule compares
 * with `>`; a bounded one (the decode ratio) is capped at its bound, 1. A fraction stays a
 * fraction (its limit is then `floor(F × factor × max_num_batched_tokens)`, as for standard).
 * The nudge keeps `floor(0.29 × 100)` at 29, as `fracLimit` does. The TTFT objective is scaled
 * the same way (an integer of ms, floored): critical's objective is looser, sheddable's tighter.
 */
export function scaleThresholds(t: BusyThresholds, factor: number): BusyThresholds {
  if (factor === 1) return t;
  const out: AnyThresholds = { ...t };
  for (const { key, range } of SCALED_SPECS) {
    const v = t[key];
    if (v === null) continue;
    let scaled = range.integer ? Math.floor(v * factor + 1e-9) : v * factor;
    if ('max' in range) scaled = Math.min(scaled, range.max);
    out[key] = scaled;
  }
  return out as BusyThresholds;
}

/** The standard thresholds, and the sheddable and critical ones derived from them. */
export function classThresholds(standard: BusyThresholds, f: PriorityFactors): ClassThresholds {
  return {
    critical: scaleThresholds(standard, f.critical),
    standard,
    sheddable: scaleThresholds(standard, f.sheddable),
  };
}
