/**
 * Streaming load against simulated workers with realistic timing: the open-loop client of one
 * point (bench/tools/goodput-client), the closed-loop capacity probe, the unloaded TTFT, and the
 * waits between points. Shared by the scenarios that measure goodput under overload.
 */
import { BenchContext, BenchGroup, CPU, runTool } from './context';
import { metrics, metricSum } from './http';
import { startFrontend, startWorker, Started } from './sluice';
import { waitFor, whileStopped } from './util';

export const PROMPT_TOKENS = 1000;
export const MAX_TOKENS = 64;

export interface ClassFigures {
  arrivals: number;
  ok: number;
  rejected: number;
  rejection_ratio: number;
  goodput_rps: number;
  goodput_slo_rps: number;
}

/** What bench/tools/goodput-client prints for one point (requests that arrived in its window). */
export interface PointResult {
  window_arrivals: number;
  window_ok: number;
  window_rejected: number;
  window_errors: number;
  window_aborted: number;
  /** Requests that succeeded, per second of the window. */
  goodput_rps: number;
  /** Requests that succeeded with their first token within the objective, per second. */
  goodput_slo_rps: number;
  rejection_ratio: number;
  /** Of the admitted requests (errors and cut-off ones included), the share within the objective. */
  admitted_met_share: number | null;
  ttft_p50_ms: number | null;
  ttft_p99_ms: number | null;
  latency_p50_ms: number | null;
  latency_p99_ms: number | null;
  /** Per priority class, when the point sent a mix of classes. */
  classes: Record<string, ClassFigures>;
  /**
   * Requests of a lower class than critical admitted (not refused) in a second of the window in
   * which a refused critical request arrived.
   */
  lower_admitted_while_critical_refused: number;
}

/** The static thresholds: decode blocks, and one engine step's budget of queued prompt tokens. */
export const GOODPUT_THRESHOLDS = [
  ...['--admission-control', 'token-capacity'],
  ...['--active-decode-blocks-threshold', '0.85', '--active-prefill-tokens-threshold-frac', '1'],
];

/** The fleet of these scenarios: two simulated workers with realistic timing, on the client core. */
export async function startSimWorkers(g: BenchGroup, ctx: BenchContext, ns: string): Promise<void> {
  const flags = ['--speedup', '1', '--nats-url', ctx.natsUrl, '--namespace', ns];
  await Promise.all(
    ['1', '2'].map((id) =>
      startWorker(g, [...flags, '--worker-id', `sim-${id}`], {
        cpu: CPU.client,
        name: `worker-${id}`,
      }),
    ),
  );
}

/** A frontend on the server core, returned once it has heard from the workers. */
export async function startFleetFrontend(
  g: BenchGroup,
  ctx: BenchContext,
  ns: string,
  name: string,
  flags: string[],
): Promise<Started> {
  const fe = await startFrontend(g, {
    ...{ natsUrl: ctx.natsUrl, databaseUrl: ctx.databaseUrl, namespace: ns },
    ...{ cpu: CPU.server, name: `frontend-${name}`, flags },
  });
  await waitFor(
    async () => metricSum(await metrics(fe.url), 'dynamo_frontend_worker_kv_total_blocks') > 0,
    `workers known to frontend-${name}`,
  );
  return fe;
}

/** The fleet's capacity, probed through `off` with every other frontend stopped, idle before and after. */
export async function fleetCapacity(
  g: BenchGroup,
  all: readonly Started[],
  off: Started,
  quick: boolean,
): Promise<number> {
  await settle(off);
  const capacity = await alone(all, [off], () => probeCapacity(g, off.url, quick));
  await settle(off);
  return capacity;
}

const loadgenFlags = (url: string, extra: string[]): string[] => [
  ...['--url', url, '--prompt-tokens', String(PROMPT_TOKENS), '--max-tokens', String(MAX_TOKENS)],
  ...extra,
];

/** Waits until the workers the frontend hears from report no KV blocks and no prefill in use. */
export async function settle(fe: Started): Promise<void> {
  await waitFor(
    async () => {
      const text = await metrics(fe.url);
      return (
        metricSum(text, 'dynamo_frontend_worker_active_decode_blocks') +
          metricSum(text, 'dynamo_frontend_worker_active_prefill_tokens') ===
        0
      );
    },
    'simulated workers idle',
    60000,
    200,
  );
}

export interface PointSpec {
  /** The frontend the load goes to. */
  target: Started;
  /** Any frontend before the same workers: the point ends when it sees them idle. */
  observer: Started;
  rate: number;
  durationS: number;
  /** The start of the window: arrivals before it are left out. */
  warmupS: number;
  /** How long answers are awaited after the last arrival before the rest are cut off. */
  drainS: number;
  /** The TTFT objective (ms) the point is judged against; null: none. */
  objectiveMs: number | null;
  /** Priority mix, e.g. `critical=0.5,sheddable=0.5`; none: no priority header. */
  mix?: string;
  /** A tenant's API key, sent as `Authorization: Bearer`; none: no key (tenant `default`). */
  bearer?: string;
}

/** One point: open-loop arrivals at `rate`, then a wait until the workers are idle again. */
export async function runPoint(g: BenchGroup, s: PointSpec): Promise<PointResult> {
  const r = await sendLoad(g, s);
  await settle(s.observer);
  return r;
}

/** The open-loop arrivals of one point, without the wait for idle workers after it. */
export function sendLoad(g: BenchGroup, s: PointSpec): Promise<PointResult> {
  return runTool<PointResult>(g, 'tools/goodput-client.js', [
    ...[String(s.warmupS), s.mix ?? '-', s.objectiveMs === null ? '-' : String(s.objectiveMs)],
    ...(s.bearer === undefined ? [] : ['--bearer', s.bearer]),
    ...loadgenFlags(s.target.url, [
      ...['--rate', String(s.rate), '--duration', String(s.durationS)],
      ...['--drain-timeout', String(s.drainS)],
    ]),
  ]);
}

/**
 * Capacity: completions/s of 600 closed-loop clients sending the load's own streaming requests
 * through a frontend without shedding, counted after a warm-up past the first wave of answers.
 */
export async function probeCapacity(g: BenchGroup, url: string, quick: boolean): Promise<number> {
  const [durationS, warmS, rampS] = quick ? [14, 10, 3] : [24, 12, 6];
  const probe = await runTool<{ rps: number; errors: number }>(g, 'tools/closed-loop.js', [
    ...['600', String(warmS), String(rampS)],
    ...loadgenFlags(url, ['--duration', String(durationS), '--stream', '--max-inflight', '600']),
  ]);
  if (probe.errors > 0 || !(probe.rps > 0))
    throw new Error(`capacity probe failed: ${JSON.stringify(probe)}`);
  return probe.rps;
}

/** TTFT p50 of the load's own request, one a second (each alone on its worker). */
export async function unloadedTtft(g: BenchGroup, url: string, quick: boolean): Promise<number> {
  const [durationS, warmupS] = quick ? [3, 1] : [15, 2];
  const r = await runTool<PointResult>(g, 'tools/goodput-client.js', [
    ...[String(warmupS), '-', '-'],
    ...loadgenFlags(url, ['--rate', '1', '--duration', String(durationS), '--stream']),
  ]);
  if (r.ttft_p50_ms === null || r.window_ok !== r.window_arrivals)
    throw new Error(`unloaded TTFT probe failed: ${JSON.stringify(r)}`);
  return r.ttft_p50_ms;
}

/**
 * Runs `measure` with every frontend of `all` but `running` stopped (SIGSTOP): idle frontends on
 * the server core still take every report and wake as often, and their turns delay the requests
 * of the one measured, a time no admission policy sees. Continued, a frontend drops the workers
 * it missed for the stale timeout and takes them back from their next report.
 */
export function alone<T>(
  all: readonly Started[],
  running: readonly Started[],
  measure: () => Promise<T>,
): Promise<T> {
  const stopped = all.filter((f) => !running.includes(f)).map((f) => f.proc.pid);
  return whileStopped(stopped, measure);
}
