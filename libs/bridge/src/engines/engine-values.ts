import { PromFamilies, PromSample } from '../prometheus/prometheus-text';
import { UnparsableError } from '../unparsable.error';

/** A finite number ≥ 0, else the scrape is unparsable (NaN, ±Inf and negatives never pass). */
export function nonNegative(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
    throw new UnparsableError(`${what} is not a finite number >= 0 (${describe(v)})`);
  }
  return v;
}

/** An integer ≥ 0 (engines print gauges as floats: `12.0` is fine, `12.5` is not). */
export function count(v: unknown, what: string): number {
  const n = nonNegative(v, what);
  if (!Number.isSafeInteger(n)) throw new UnparsableError(`${what} is not an integer (${n})`);
  return n;
}

/** A fraction in [0, 1]; a hair above 1 from float rounding is taken as 1. */
export function fraction(v: unknown, what: string): number {
  const n = nonNegative(v, what);
  if (n > 1 + 1e-6) throw new UnparsableError(`${what} is above 1 (${n})`);
  return Math.min(n, 1);
}

/** Like `count`, for a value that may be absent (undefined stays undefined). */
export function optionalCount(v: unknown, what: string): number | undefined {
  return v === undefined || v === null ? undefined : count(v, what);
}

/** A non-empty string, or undefined. */
export function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}

export function record(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new UnparsableError(`${what} is not a JSON object`);
  }
  return v as Record<string, unknown>;
}

/** The samples of a family, which must be present. */
export function required(families: PromFamilies, name: string): readonly PromSample[] {
  const samples = families.get(name) ?? [];
  if (samples.length === 0) throw new UnparsableError(`metric ${name} is missing`);
  return samples;
}

/**
 * Samples of one family keyed by the value of `label` (`''` when the label is absent). A key
 * seen twice keeps the last sample, as Prometheus would keep the last write.
 */
export function byLabel(samples: readonly PromSample[], label: string): Map<string, PromSample> {
  const out = new Map<string, PromSample>();
  for (const s of samples) out.set(s.labels[label] ?? '', s);
  return out;
}

function describe(v: unknown): string {
  return typeof v === 'string' ? `'${v.slice(0, 40)}'` : String(v);
}
