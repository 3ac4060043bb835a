import {
  AdmissionControl,
  THRESHOLD_KEYS,
  ThresholdKey,
  ThresholdValue,
  ThresholdValues,
} from '../config/threshold-keys';

export {
  NO_THRESHOLDS,
  NUMERIC_KEYS,
  NUMERIC_SPECS,
  THRESHOLD_KEYS,
  THRESHOLD_SPECS,
  type NumericKey,
  type ThresholdKey,
  type WireKey,
} from '../config/threshold-keys';

/**
 * Effective per-model values for one model; a threshold's `null` means "not configured, never
 * fires". `admissionControl` is never null here: the global flag always has a value.
 */
export type BusyThresholds = ThresholdValues;

/** A stored per-model override: a key that is absent or `null` falls back to the global flag. */
export type ThresholdOverride = { -readonly [K in ThresholdKey]?: ThresholdValues[K] };

/** The mutable record code that treats every key alike fills in, then returns as values. */
export type AnyThresholds = Record<ThresholdKey, ThresholdValue | null>;

export function noThresholds(t: BusyThresholds): boolean {
  return THRESHOLD_KEYS.every((key) => t[key] === null);
}

/** Equal values key by key, an absent key counting as `null`. */
export function sameThresholds(a: ThresholdOverride | undefined, b: ThresholdOverride): boolean {
  return THRESHOLD_KEYS.every((key) => (a?.[key] ?? null) === (b[key] ?? null));
}

/** The admission mode in force for a model's values (the global flag's `none` if unset). */
export function admissionControlOf(t: BusyThresholds): AdmissionControl {
  return t.admissionControl ?? 'none';
}
