import { THRESHOLD_KEYS, ThresholdKey, ThresholdValues } from '../config/threshold-keys';

export {
  NO_THRESHOLDS,
  THRESHOLD_KEYS,
  THRESHOLD_SPECS,
  type ThresholdKey,
  type WireKey,
} from '../config/threshold-keys';

/** Effective busy thresholds for one model; `null` means "not configured, never fires". */
export type BusyThresholds = ThresholdValues;

/** A stored per-model override: a key that is absent or `null` falls back to the global flag. */
export type ThresholdOverride = Partial<Record<ThresholdKey, number | null>>;

export function noThresholds(t: BusyThresholds): boolean {
  return THRESHOLD_KEYS.every((key) => t[key] === null);
}

/** Equal values key by key, an absent key counting as `null`. */
export function sameThresholds(a: ThresholdOverride | undefined, b: ThresholdOverride): boolean {
  return THRESHOLD_KEYS.every((key) => (a?.[key] ?? null) === (b[key] ?? null));
}
