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

/** Nearest-rank percentile of samples (p in 0..100); NaN when there are none. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length))) - 1];
}

/** Median (mean of the middle two for an even count); NaN when there are no samples. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Least-squares slope of y over x. */
export function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

/** The order of the compared subjects in round `round` (A B C, B C A, …). */
export function rotate<T>(items: readonly T[], round: number): T[] {
  const k = round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** A number for a report: thousands separated from 1,000, else `digits` decimals below 100. */
export function fmt(x: number | null | undefined, digits = 1): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  const abs = Math.abs(x);
  if (abs >= 1000) return Math.round(x).toLocaleString('en-US');
  return x.toFixed(abs >= 100 ? 0 : digits);
}

/** A share (0.25) as a percentage (`25 %`). */
export const pct = (share: number, digits = 0): string => `${fmt(100 * share, digits)} %`;

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
