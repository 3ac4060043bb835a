import { CPU } from './context';
import { ProcessGroup } from '@sluice/testkit';

export interface CannonOptions {
  url: string;
  body?: string;
  method?: 'GET' | 'POST';
  connections?: number;
  durationS: number;
  /** Overall request rate limit; unset = as fast as it goes. */
  rate?: number;
  /** Request headers besides `content-type`. */
  headers?: Record<string, string>;
}

export interface CannonResult {
  rps: number;
  total: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
}

/**
 * Runs autocannon (the project's devDependency) as its own process on the client core, 50
 * connections by default as in docs/toolchain.md, and returns its JSON summary.
 */
export async function autocannon(group: ProcessGroup, o: CannonOptions): Promise<CannonResult> {
  const args = [
    ...['-c', String(o.connections ?? 50), '-d', String(o.durationS)],
    ...['-m', o.method ?? 'POST', '-H', 'content-type=application/json'],
    ...Object.entries(o.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}=${v}`]),
    ...(o.body ? ['-b', o.body] : []),
    ...(o.rate ? ['-R', String(o.rate)] : []),
    '--json',
    o.url,
  ];
  const proc = group.node('autocannon', 'node_modules/autocannon/autocannon.js', args, {
    cpu: CPU.client,
    captureStdout: true,
  });
  const code = await proc.exited;
  if (code !== 0) throw new Error(`autocannon exited ${code}: ${proc.output.slice(-1000)}`);
  const r = JSON.parse(proc.stdout) as {
    requests: { average: number; total: number };
    duration: number;
    statusCodeStats?: Record<string, { count: number }>;
    errors: number;
    timeouts: number;
    latency: { p50: number; p99: number };
  };
  const statuses: Record<string, number> = {};
  for (const [k, v] of Object.entries(r.statusCodeStats ?? {})) statuses[k] = v.count;
  return {
    rps: r.requests.total / r.duration,
    total: r.requests.total,
    statuses,
    errors: r.errors,
    timeouts: r.timeouts,
    latencyP50Ms: r.latency.p50,
    latencyP99Ms: r.latency.p99,
  };
}

/** Throws unless every answer had the expected status (a benchmark of errors is no benchmark). */
export function expectOnly(r: CannonResult, status: string, what: string): void {
  const other = Object.entries(r.statuses).filter(([k]) => k !== status);
  if (other.length > 0 || r.errors > 0) {
    throw new Error(
      `${what}: expected only ${status}, got ${JSON.stringify(r.statuses)} and ${r.errors} errors`,
    );
  }
}
