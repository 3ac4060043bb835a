import { THRESHOLD_SPECS, ThresholdKey, WireKey } from '../busy-thresholds';
import type { ThresholdPatch, ThresholdValues } from './threshold.repository';

/** One key's scheduled return, stored under its wire name in `model_thresholds.pending_reverts`. */
export interface PendingRevert {
  /** The value the key had before the temporary change (`null`: no per-model value). */
  restore: ThresholdValues[ThresholdKey];
  /** When, ISO-8601 with milliseconds, on the database's clock. */
  at: string;
  /** Audit id of the temporary change whose TTL this is. */
  audit: string;
}

export type PendingReverts = Partial<Record<WireKey, PendingRevert>>;

/** A temporary change being written: its audit id and when it is due to revert. */
export interface Expiry {
  audit: string;
  at: Date;
}

/** What an expiry restores: the due keys as a change, the changes they undo, what stays pending. */
export interface DueReverts {
  patch: ThresholdPatch;
  audits: string[];
  remaining: PendingReverts | null;
}

/**
 * The pending reverts after a change that sets the keys of `patch`. Without an expiry, each key
 * it sets keeps its new value for good: that key's pending revert is dropped. With one, each key
 * it sets returns at `expiry.at` to its value from before — from before the first of several
 * temporary changes of that key in a row, so stacking them never makes a temporary value
 * permanent. Keys the change does not set keep their pending revert as it was.
 */
export function schedule(
  pending: PendingReverts | null,
  patch: ThresholdPatch,
  before: ThresholdValues,
  expiry: Expiry | null,
): PendingReverts | null {
  const out = readPending(pending);
  for (const { key, wire } of THRESHOLD_SPECS) {
    if (patch[key] === undefined) continue;
    const earlier = out[wire];
    delete out[wire];
    if (expiry) {
      const restore = earlier ? earlier.restore : before[key];
      out[wire] = { restore, at: expiry.at.toISOString(), audit: expiry.audit };
    }
  }
  return orNull(out);
}

/** The earliest time a pending revert is due, or null when none is pending. */
export function revertAt(pending: PendingReverts | null): Date | null {
  const times = Object.values(readPending(pending)).map((r) => Date.parse(r.at));
  return times.length ? new Date(Math.min(...times)) : null;
}

/** Splits the pending reverts into those due at `now` (as one change) and the rest. */
export function takeDue(pending: PendingReverts | null, now: Date): DueReverts {
  const remaining = readPending(pending);
  const patch: ThresholdPatch = {};
  const audits = new Set<string>();
  for (const { key, wire } of THRESHOLD_SPECS) {
    const revert = remaining[wire];
    if (!revert || Date.parse(revert.at) > now.getTime()) continue;
    (patch as Record<ThresholdKey, unknown>)[key] = revert.restore;
    audits.add(revert.audit);
    delete remaining[wire];
  }
  return { patch, audits: [...audits], remaining: orNull(remaining) };
}

/** Reads the stored object defensively: known keys with a well-formed entry only. */
function readPending(stored: PendingReverts | null): PendingReverts {
  const out: PendingReverts = {};
  for (const { wire } of THRESHOLD_SPECS) {
    const r = stored?.[wire] as Partial<PendingRevert> | undefined;
    if (r && 'restore' in r && typeof r.at === 'string' && !Number.isNaN(Date.parse(r.at))) {
      out[wire] = { restore: r.restore ?? null, at: r.at, audit: String(r.audit ?? '') };
    }
  }
  return out;
}

function orNull(pending: PendingReverts): PendingReverts | null {
  return Object.keys(pending).length ? pending : null;
}
