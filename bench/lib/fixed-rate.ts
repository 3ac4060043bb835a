import { BenchGroup, runTool } from './context';

/** What bench/tools/fixed-rate prints: latencies in µs from each request's scheduled send time. */
export interface FixedRateResult {
  sent: number;
  statuses: Record<string, number>;
  errors: number;
  p50_us: number | null;
  p90_us: number | null;
  p99_us: number | null;
  max_us: number | null;
  max_send_lag_us: number;
  /** This client's own CPU time per recorded request (µs), from the end of its warm-up. */
  client_cpu_us_per_request: number;
}

/**
 * The open-loop client at a fixed rate on the client core; with `warmupS` the same traffic runs
 * that long first, unrecorded.
 */
export function fixedRate(
  g: BenchGroup,
  o: {
    url: string;
    rate: number;
    durationS: number;
    body: string;
    connections?: number;
    warmupS?: number;
    headers?: Record<string, string>;
  },
): Promise<FixedRateResult> {
  return runTool<FixedRateResult>(g, 'tools/fixed-rate.js', [
    ...[o.url, String(o.rate), String(o.durationS), o.body],
    ...[String(o.connections ?? 64), String(o.warmupS ?? 0), JSON.stringify(o.headers ?? {})],
  ]);
}

/** Throws unless every recorded answer had `status` (a benchmark of errors is no benchmark). */
export function expectStatus(r: FixedRateResult, status: string, what: string): void {
  if (r.errors > 0 || Object.keys(r.statuses).some((k) => k !== status))
    throw new Error(`${what}: ${JSON.stringify(r.statuses)}, ${r.errors} errors`);
}
