/** Ascending numeric copy (Array#sort alone would order 100 before 9). */
export function sortedSamples(samples: readonly number[]): Float64Array {
  return Float64Array.from(samples).sort();
}

/**
 * Nearest-rank percentile of ascending samples: the smallest sample with at least p% of the
 * samples at or below it. Exact, no interpolation; null when there are no samples.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number | null {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be in [0, 100], got ${p}`);
  const n = sorted.length;
  if (n === 0) return null;
  const rank = Math.max(1, Math.ceil((p * n) / 100));
  return sorted[rank - 1];
}

export interface LatencySummary {
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
}

export function summarizeLatencies(samples: readonly number[]): LatencySummary {
  const sorted = sortedSamples(samples);
  return {
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: percentile(sorted, 100),
  };
}
