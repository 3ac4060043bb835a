import { uniqueNamespace as sharedNamespace, waitFor as sharedWaitFor } from '@sluice/testkit';

export { freePort, sleep } from '@sluice/testkit';

/** The shared `waitFor`, with the bench's longer default timeout (processes start under load). */
export function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 15000,
  everyMs = 25,
): Promise<T> {
  return sharedWaitFor(probe, what, timeoutMs, everyMs);
}

/** Nanoseconds since an arbitrary origin, as a number (fine for durations below ~100 days). */
export const nowNs = (): number => Number(process.hrtime.bigint());

export function sorted(xs: readonly number[]): number[] {
  return [...xs].sort((a, b) => a - b);
}

/** Nearest-rank percentile of samples (p in 0..100); null when there are none. */
export function percentile(xs: readonly number[], p: number): number | null {
  if (xs.length === 0) return null;
  const s = sorted(xs);
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)));
  return s[rank - 1];
}

/** Median (mean of the middle two for an even count); null when there are no samples. */
export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = sorted(xs);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export const minOf = (xs: readonly number[]): number | null => (xs.length ? Math.min(...xs) : null);
export const maxOf = (xs: readonly number[]): number | null => (xs.length ? Math.max(...xs) : null);

/** Least-squares slope of y over x. */
export function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Pearson's correlation of two series of the same length (null under two points, or with no spread). */
export function correlation(xs: readonly number[], ys: readonly number[]): number | null {
  const n = xs.length;
  if (n < 2 || ys.length !== n) return null;
  const mx = xs.reduce((a, x) => a + x, 0) / n;
  const my = ys.reduce((a, y) => a + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
}

/** Rotates the order of the compared subjects from round to round (A B C, B C A, …). */
export function rotate<T>(items: readonly T[], round: number): T[] {
  const k = round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

export function fmt(x: number | null | undefined, digits = 1): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  const abs = Math.abs(x);
  if (abs >= 1000) return Math.round(x).toLocaleString('en-US');
  return x.toFixed(abs >= 100 ? 0 : digits);
}

/** A share (0.25) as a percentage for a report (`25 %`); null: `–`. */
export const pct = (share: number | null, digits = 0): string =>
  share === null ? '–' : `${fmt(100 * share, digits)} %`;

/** A NATS namespace nobody else uses, named after the bench and the scenario. */
export const uniqueNamespace = (prefix: string): string => sharedNamespace(`bench${prefix}x`);

/**
 * Runs `measure` with the processes `pids` stopped (SIGSTOP), continued after whatever happens:
 * a server not measured then takes no CPU from the one measured on a shared core.
 */
export async function whileStopped<T>(
  pids: readonly number[],
  measure: () => Promise<T>,
): Promise<T> {
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  try {
    return await measure();
  } finally {
    for (const pid of pids) process.kill(pid, 'SIGCONT');
  }
}
