import { BusyThresholds, THRESHOLD_SPECS, ThresholdKey, WireKey } from './busy-thresholds';

export type { WireKey };

/** The snake_case keys of contract §3.2 and §5, `null` where no value applies. */
export type WireThresholdValues = Record<WireKey, number | null>;

export function toWire(t: BusyThresholds): WireThresholdValues {
  const out = {} as WireThresholdValues;
  for (const s of THRESHOLD_SPECS) out[s.wire] = t[s.key];
  return out;
}

/** Reads a stored object defensively: every key present, `null` where none is given. */
export function fromWire(w: Partial<WireThresholdValues> | null): BusyThresholds {
  const out = {} as Record<ThresholdKey, number | null>;
  for (const s of THRESHOLD_SPECS) out[s.key] = w?.[s.wire] ?? null;
  return out;
}
