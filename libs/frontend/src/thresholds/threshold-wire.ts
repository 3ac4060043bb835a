import { WireThresholdValues } from '../config/threshold-keys';
import { AnyThresholds, BusyThresholds, THRESHOLD_SPECS } from './busy-thresholds';

export type { WireKey } from './busy-thresholds';
export type { WireThresholdValues } from '../config/threshold-keys';

export function toWire(t: BusyThresholds): WireThresholdValues {
  const out: Record<string, unknown> = {};
  for (const s of THRESHOLD_SPECS) out[s.wire] = t[s.key];
  return out as WireThresholdValues;
}

/** Reads a stored object defensively: every key present, `null` where none is given. */
export function fromWire(w: Partial<WireThresholdValues> | null): BusyThresholds {
  const out = {} as AnyThresholds;
  for (const s of THRESHOLD_SPECS) out[s.key] = w?.[s.wire] ?? null;
  return out as BusyThresholds;
}
