/** A Prometheus histogram read from /metrics text: cumulative counts per upper bound `le`. */
export type Buckets = Array<{ le: number; count: number }>;

const BUCKET = /^(\w+)_bucket\{([^}]*)\}\s+(\S+)/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** The buckets of `name`, summed over every series whose labels include `labels`. */
export function histogramBuckets(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): Buckets {
  const byLe = new Map<number, number>();
  for (const line of text.split('\n')) {
    const m = BUCKET.exec(line);
    if (!m || m[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of m[2].matchAll(LABEL)) found[pair[1]] = pair[2];
    if (!Object.entries(labels).every(([k, v]) => found[k] === v)) continue;
    const le = found.le === '+Inf' ? Infinity : Number(found.le);
    byLe.set(le, (byLe.get(le) ?? 0) + Number(m[3]));
  }
  return [...byLe.entries()].sort(([a], [b]) => a - b).map(([le, count]) => ({ le, count }));
}

/** What was observed between two reads of the same histogram (`after` − `before`). */
export function bucketsBetween(before: Buckets, after: Buckets): Buckets {
  const was = new Map(before.map((b) => [b.le, b.count]));
  return after.map((b) => ({ le: b.le, count: b.count - (was.get(b.le) ?? 0) }));
}

/** Adds up histograms observed at different times (same bucket bounds). */
export function bucketsSum(parts: Buckets[]): Buckets {
  const sum = new Map<number, number>();
  for (const p of parts) for (const b of p) sum.set(b.le, (sum.get(b.le) ?? 0) + b.count);
  return [...sum.entries()].sort(([a], [b]) => a - b).map(([le, count]) => ({ le, count }));
}

export const bucketsTotal = (b: Buckets): number => b[b.length - 1]?.count ?? 0;

/**
 * The q-quantile (0..1), interpolated linearly inside the bucket that holds it as Prometheus'
 * `histogram_quantile` does (the first bucket starts at 0). A quantile in the +Inf bucket is
 * reported as the highest finite bound, `atLeast` then true: it is only a lower bound.
 */
export function bucketQuantile(b: Buckets, q: number): { value: number | null; atLeast: boolean } {
  const total = bucketsTotal(b);
  if (total <= 0) return { value: null, atLeast: false };
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const { le, count } of b) {
    if (count >= rank && count > below) {
      if (!Number.isFinite(le)) return { value: lower, atLeast: true };
      return { value: lower + ((le - lower) * (rank - below)) / (count - below), atLeast: false };
    }
    if (Number.isFinite(le)) lower = le;
    below = count;
  }
  return { value: lower, atLeast: true };
}
