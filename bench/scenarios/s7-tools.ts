import { ProcessGroup } from '@sluice/testkit';
import { CPU } from '../lib/context';
import { metrics, metricSum } from '../lib/http';
import { bucketsBetween, histogramBuckets } from '../lib/prom-histogram';
import { Started } from '../lib/sluice';
import { sleep, waitFor, whileStopped } from '../lib/util';
import type { ClientResult, FrontendCounts, PointResult } from './s7-types';

export const PROMPT = 1000;
export const MAX_TOKENS = 64;

const SLO_REJECTIONS = 'sluice_frontend_slo_rejection_total';
const REJECTIONS = 'dynamo_frontend_model_rejection_total';
const PREDICTION_ERROR = 'sluice_frontend_ttft_prediction_error_seconds';
const SLO_SAMPLE = 'sluice_frontend_slo_sample_total';

export const loadgenFlags = (url: string, extra: string[]): string[] => [
  ...['--url', url, '--prompt-tokens', String(PROMPT), '--max-tokens', String(MAX_TOKENS)],
  ...extra,
];

export async function runTool(g: ProcessGroup, script: string, args: string[]): Promise<unknown> {
  const proc = g.node(script.split('/').pop() ?? script, script, args, {
    cpu: CPU.client,
    captureStdout: true,
  });
  const code = await proc.exited;
  if (code !== 0) throw new Error(`${script} exited ${code}: ${proc.output.slice(-1500)}`);
  return JSON.parse(proc.stdout);
}

/** Waits until the simulated workers report no KV blocks and no prefill in use. */
export async function settle(fe: Started): Promise<void> {
  await waitFor(
    async () => {
      const text = await metrics(fe.url);
      const load =
        metricSum(text, 'dynamo_frontend_worker_active_decode_blocks') +
        metricSum(text, 'dynamo_frontend_worker_active_prefill_tokens');
      return load === 0;
    },
    'simulated workers idle',
    60000,
    200,
  );
}

/** Samples the workers' reported KV use and queued prefill once a second during a point. */
function sampleWorkers(
  fe: Started,
  fromMs: number,
  toMs: number,
): { stop: () => Promise<{ kv: number | null; prefill: number | null }> } {
  const kv: number[] = [];
  const prefill: number[] = [];
  let stopped = false;
  const t0 = Date.now();
  const loop = (async () => {
    while (!stopped) {
      const t = Date.now() - t0;
      if (t >= fromMs && t < toMs) {
        const text = await metrics(fe.url).catch(() => '');
        const total = metricSum(text, 'dynamo_frontend_worker_kv_total_blocks');
        if (total > 0)
          kv.push(metricSum(text, 'dynamo_frontend_worker_active_decode_blocks') / total);
        prefill.push(metricSum(text, 'dynamo_frontend_worker_active_prefill_tokens'));
      }
      await sleep(1000);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      const mean = (xs: number[]): number | null =>
        xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
      return { kv: mean(kv), prefill: mean(prefill) };
    },
  };
}

/** What the frontend's objective counters moved by between two reads of its /metrics. */
function countsBetween(before: string, after: string): FrontendCounts {
  const d = (name: string, labels: Record<string, string> = {}): number =>
    metricSum(after, name, labels) - metricSum(before, name, labels);
  return {
    slo_rejections: d(SLO_REJECTIONS),
    rejections: d(REJECTIONS),
    prediction_error: bucketsBetween(
      histogramBuckets(before, PREDICTION_ERROR),
      histogramBuckets(after, PREDICTION_ERROR),
    ),
    sample: {
      met: d(SLO_SAMPLE, { outcome: 'met' }),
      missed: d(SLO_SAMPLE, { outcome: 'missed' }),
      failed: d(SLO_SAMPLE, { outcome: 'failed' }),
    },
  };
}

export interface PointSpec {
  /** The frontend the load goes to. */
  target: Started;
  /** Any frontend in front of the same workers: the worker state is read from it. */
  observer: Started;
  rate: number;
  /** Priority mix for the client, `-` for none. */
  mix: string;
  objectiveMs: number;
  durationS: number;
  warmupS: number;
  drainS: number;
}

/**
 * One point: the open-loop client for `durationS`, the frontend's counters read when the window
 * opens and again once the workers are idle (so they hold the window's arrivals, give or take
 * the client's start-up of a fraction of a second), the worker state sampled in the window.
 */
export async function runPoint(g: ProcessGroup, s: PointSpec): Promise<PointResult> {
  const sampler = sampleWorkers(s.observer, s.warmupS * 1000, s.durationS * 1000);
  const before = sleep(s.warmupS * 1000).then(() => metrics(s.target.url));
  const r = (await runTool(g, 'dist/bench/tools/goodput-client.js', [
    String(s.warmupS),
    s.mix,
    String(s.objectiveMs),
    ...loadgenFlags(s.target.url, [
      ...['--rate', String(s.rate), '--duration', String(s.durationS)],
      ...['--drain-timeout', String(s.drainS)],
    ]),
  ])) as ClientResult;
  const w = await sampler.stop();
  await settle(s.observer);
  const counts = countsBetween(await before, await metrics(s.target.url));
  return { ...r, ...counts, kv_used_mean: w.kv, prefill_queued_mean: w.prefill };
}

/**
 * Capacity: completions/s of 600 closed-loop clients sending the load's own requests (streaming,
 * same prompt and output length) through the frontend without shedding, counted after a warm-up.
 */
export async function probeCapacity(g: ProcessGroup, url: string, quick: boolean): Promise<number> {
  // A saturated request takes ~9 s end to end (600 clients, ~66/s): the count needs a window
  // past the first wave even in --quick.
  const [probeS, probeWarm, probeRamp] = quick ? [18, 10, 3] : [24, 12, 6];
  const probe = (await runTool(g, 'dist/bench/tools/closed-loop.js', [
    '600',
    String(probeWarm),
    String(probeRamp),
    ...loadgenFlags(url, ['--duration', String(probeS), '--stream', '--max-inflight', '600']),
  ])) as { rps: number; errors: number };
  if (probe.errors > 0 || probe.rps <= 0)
    throw new Error(`capacity probe failed: ${JSON.stringify(probe)}`);
  return probe.rps;
}

/**
 * Unloaded TTFT of the load's own request: one request a second (each is alone on its worker:
 * it ends in ~1.6 s and the router spreads them over both), p50 of those after a short warm-up.
 */
export async function unloadedTtft(
  g: ProcessGroup,
  url: string,
  quick: boolean,
): Promise<{ p50: number; n: number }> {
  const [durationS, warmupS] = quick ? [8, 2] : [20, 2];
  const r = (await runTool(g, 'dist/bench/tools/goodput-client.js', [
    String(warmupS),
    '-',
    '-',
    ...loadgenFlags(url, ['--rate', '1', '--duration', String(durationS), '--stream']),
  ])) as ClientResult;
  if (r.ttft_p50_ms === null || r.window_ok !== r.window_arrivals)
    throw new Error(`unloaded TTFT probe failed: ${JSON.stringify(r)}`);
  return { p50: r.ttft_p50_ms, n: r.window_ok };
}

/**
 * Runs `measure` with every frontend of `all` but those in `running` stopped (SIGSTOP), and
 * continues them after. The scenario keeps one frontend per configuration in front of the same
 * workers, all on the server CPU; idle, each still takes every report (~3 % of a core at this
 * load) and wakes as often. Measured on 2026-12-02, with six of them beside the frontend under
 * load its event loop lagged up to 40–150 ms in every second, and a request waited up to 360 ms
 * between the client sending it and the frontend reading it: a time no admission policy sees,
 * and the most of every miss of the objective at 4×. Stopped, they take nothing; continued, a
 * frontend drops the workers whose reports it did not hear for the stale timeout and takes them
 * back from the next report (its TTFT model starts again from the seed: the point's warm-up is
 * its learning, as after a restart). One stopped through several points can be dropped by NATS
 * as a slow consumer; it reconnects by itself. Tried instead and not kept: the idle scheduling
 * policy (`chrt --idle`), which keeps them reading reports; its one quick run, 2026-12-02, did no
 * better (96.9 % of admitted requests within the objective at 4×, a fifth critical 2.4 %).
 */
export async function alone<T>(
  all: readonly Started[],
  running: readonly Started[],
  measure: () => Promise<T>,
): Promise<T> {
  const stopped = all.filter((f) => !running.includes(f)).flatMap((f) => f.proc.child.pid ?? []);
  return whileStopped(stopped, measure);
}
