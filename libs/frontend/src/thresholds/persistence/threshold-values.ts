export { noThresholds as isEmpty } from '../busy-thresholds';
export { toWire } from '../threshold-wire';
import { AnyThresholds, THRESHOLD_KEYS } from '../busy-thresholds';
import { fromWire, toWire } from '../threshold-wire';
import { ModelThresholdEntity } from './entities/model-threshold.entity';
import { ThresholdPatch, ThresholdValues, WireThresholds } from './threshold.repository';

/** The entity's properties carry the internal key names. */
export function valuesOf(row: ModelThresholdEntity): ThresholdValues {
  const out = {} as AnyThresholds;
  for (const key of THRESHOLD_KEYS) out[key] = row[key] ?? null;
  return out as ThresholdValues;
}

/** Absent (or undefined) keys keep the stored value; `null` clears it; unknown keys are ignored. */
export function merge(before: ThresholdValues, patch: ThresholdPatch): ThresholdValues {
  const out = {} as AnyThresholds;
  for (const key of THRESHOLD_KEYS) out[key] = patch[key] === undefined ? before[key] : patch[key];
  return out as ThresholdValues;
}

/** Reads a stored jsonb object defensively: every key present, `null` where none is stored. */
export function wireOf(stored: Partial<WireThresholds> | null): WireThresholds {
  return toWire(fromWire(stored));
}
