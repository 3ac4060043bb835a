import { CPU } from './context';
import { ProcessGroup } from '@sluice/testkit';

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
 * Runs bench/tools/fixed-rate (open loop, µs latencies) on the client core; with `warmupS` the
 * same traffic runs that long first, unrecorded.
 */
export async function fixedRate(
  group: ProcessGroup,
  url: string,
  rate: number,
  durationS: number,
  body: string,
  connections = 64,
  warmupS = 0,
): Promise<FixedRateResult> {
  const proc = group.node(
    'fixed-rate',
    'dist/bench/tools/fixed-rate.js',
    [url, String(rate), String(durationS), body, String(connections), String(warmupS)],
    { cpu: CPU.client, captureStdout: true },
  );
  const code = await proc.exited;
  if (code !== 0) throw new Error(`fixed-rate exited ${code}: ${proc.output.slice(-1000)}`);
  return JSON.parse(proc.stdout) as FixedRateResult;
}

/** Starts the fixed-rate client without waiting (background traffic); `done` resolves at the end. */
export function fixedRateInBackground(
  group: ProcessGroup,
  url: string,
  rate: number,
  durationS: number,
  body: string,
): Promise<FixedRateResult> {
  return fixedRate(group, url, rate, durationS, body, 32);
}
