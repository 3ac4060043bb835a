/**
 * The real engine as the yardstick: one Debian llama-server (4 slots, the micro model of
 * `npm run engines:setup`) on CPU 1 behind four frontends on CPU 0, one per policy, each with
 * its in-process bridge and its own TTFT model; offered 0.5x to 4x the engine's measured capacity
 * with shedding off, static thresholds, a TTFT objective and the static policy again (an A/A
 * control, CONTROL), interleaved.
 *
 * The load is real-engine-load.ts, the policies real-engine-policies.ts, the figures and tables
 * real-engine-report.ts, the plots real-engine-plots.ts.
 */
import { LlamaModel, LlamaServer, realEngineUnavailable } from '@sluice/testkit';
import { BenchContext, CPU } from '../lib/context';
import { describeProcess, requireLikeForLike } from '../lib/processes';
import { Plan, Scenario, ScenarioResult } from '../lib/scenario';
import { startFrontend, Started } from '../lib/sluice';
import { fmt, pct, rotate, uniqueNamespace, waitFor } from '../lib/util';
import {
  closedLoopRate,
  pool,
  PointResult,
  RequestShape,
  runSlice,
  Slice,
  unloaded,
} from './real-engine-load';
import { Policy, policyBody, SETTINGS, SUBJECTS } from './real-engine-policies';
import { plots } from './real-engine-plots';
import { details, figures, Point, Run } from './real-engine-report';

const MODEL: LlamaModel = 'micro';
const SHAPE: RequestShape = { model: MODEL, promptWords: 16, maxTokens: 96 };
/** `NAME:TOKEN` (docs/security.md); requests carry the token. */
const ADMIN = { name: 'bench', token: 'real-engine-admin' };

export const realEngineScenario: Scenario = {
  id: 'real-engine',
  title: 'Real engine: llama.cpp server under overload',
  plan: (quick) => (quick ? { rounds: 1, seconds: 55 } : { rounds: 2, seconds: 2000 }),
  async run(ctx: BenchContext, plan: Plan): Promise<ScenarioResult> {
    const why = realEngineUnavailable();
    if (why) throw new Error(`the real llama.cpp server cannot run here: ${why}`);
    const g = ctx.group();
    try {
      const llama = await LlamaServer.start({ model: MODEL, slots: 4, cpu: CPU.client, group: g });
      const start = (policy: Policy): Promise<Started> =>
        startFrontend(g, {
          ...{ natsUrl: ctx.natsUrl, databaseUrl: ctx.databaseUrl },
          ...{ namespace: uniqueNamespace('realengine'), cpu: CPU.server },
          name: `frontend-${policy}`,
          flags: [
            ...['--admin-token', `${ADMIN.name}:${ADMIN.token}`, '--admission-control', 'none'],
            ...['--engine-target', `llamacpp=llama=${llama.url}`],
          ],
        });
      const started = await Promise.all(SUBJECTS.map(start));
      const fe = Object.fromEntries(SUBJECTS.map((p, i) => [p, started[i]])) as Record<
        (typeof SUBJECTS)[number],
        Started
      >;
      for (const f of started) await engineKnown(f);
      const processes = SUBJECTS.map((p) => describeProcess(`frontend, ${p}`, fe[p].proc.pid));
      requireLikeForLike(processes);

      const alone = await unloaded(fe.off.url, SHAPE, ctx.quick ? 3 : 10);
      const capacity = await closedLoopRate(
        fe.off.url,
        SHAPE,
        8,
        ctx.quick ? 6 : 16,
        ctx.quick ? 2 : 4,
      );
      // A user's wait worth keeping: what one request alone waits, plus a quarter of an answer
      // (a queued request waits about that long for one of the 4 slots to free).
      const objectiveMs = Math.round(3 * alone.ttftMs + alone.totalMs / 4);
      // The machine's speed drifts over tens of seconds (in one run the engine's time per token
      // rose by half for a minute), so a policy's point at a load is `passes` short slices,
      // interleaved with the other policies' (a pass runs one slice of each in turn), pooled.
      const [durationS, warmupS, drainS] = ctx.quick ? [3, 1, 2] : [14, 2, 5];
      const passes = ctx.quick ? 1 : 3;
      const run: Run = {
        ...{
          shape: SHAPE,
          capacity,
          alone,
          objectiveMs,
          rounds: plan.rounds,
          passes,
          durationS,
          warmupS,
          drainS,
        },
        loads: ctx.quick ? [1, 4] : [0.5, 1, 2, 4],
      };
      ctx.log(
        `unloaded TTFT ${fmt(alone.ttftMs, 0)} ms, answer ${fmt(alone.totalMs, 0)} ms; ` +
          `capacity ${fmt(capacity, 2)} req/s; objective ${objectiveMs} ms`,
      );
      const slice = async (policy: Policy, load: number, seed: number, on: Started) => {
        await setPolicy(on, policyBody(policy, MODEL, objectiveMs));
        await idle(llama);
        return runSlice({
          ...{ ...SHAPE, url: on.url, rate: load * capacity, objectiveMs, seed, llama },
          ...{ durationS, warmupS, drainS },
        });
      };
      /** `passes` passes over `subjects`, each pass one slice of each in turn; pooled. */
      const interleaved = async <P extends Policy>(
        subjects: readonly P[],
        load: number,
        seed: number,
        on: (p: P) => Started,
        turn: number,
      ): Promise<Map<P, PointResult>> => {
        const slices = new Map<P, Slice[]>(subjects.map((p) => [p, []]));
        for (let pass = 0; pass < passes; pass++) {
          const got: string[] = [];
          for (const p of rotate(subjects, turn + pass)) {
            const x = await slice(p, load, seed + pass, on(p));
            slices.get(p)?.push(x);
            got.push(`${p} ${fmt(x.met / x.windowS, 2)}`);
          }
          ctx.log(
            `  pass ${pass + 1}/${passes} at ${load}×, req/s within the objective: ${got.join(', ')}`,
          );
        }
        const pooled = new Map<P, PointResult>();
        for (const [p, xs] of slices) {
          const r = pool(xs);
          ctx.log(
            `${p} at ${load}×: ${fmt(r.goodput, 2)} req/s within the objective, refused ` +
              `${pct(r.refused / Math.max(1, r.arrivals))}, TTFT p99 ${fmt(r.ttftP99, 0)} ms`,
          );
          pooled.set(p, r);
        }
        return pooled;
      };
      // Full runs: the settings docs/engines.md weighs, at 4×, on the static frontend.
      const settings: ReadonlyMap<string, PointResult> = ctx.quick
        ? new Map()
        : await interleaved(SETTINGS, 4, 1000, () => fe.static, 0);
      const points: Point[] = [];
      for (let round = 0; round < plan.rounds; round++) {
        for (const [li, load] of run.loads.entries()) {
          const seed = round * 100 + li * 10;
          const pooled = await interleaved(SUBJECTS, load, seed, (p) => fe[p], round + li);
          for (const [policy, r] of pooled) points.push({ ...r, policy, load, round });
        }
      }
      return {
        figures: figures(points, run),
        details: details(points, run, settings),
        processes,
        plots: plots(points, run),
      };
    } finally {
      await g.stopAll();
    }
  },
};

async function engineKnown(f: Started): Promise<void> {
  await waitFor(
    async () => (await (await fetch(`${f.url}/v1/models`)).text()).includes(MODEL),
    'the engine known to the frontend',
    60_000,
    200,
  );
}

/** One per-model `/busy_threshold` write (docs/api.md) puts a policy in force. */
async function setPolicy(f: Started, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${f.url}/busy_threshold`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN.token}` },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST /busy_threshold: ${res.status} ${await res.text()}`);
}

/** Every point starts on an idle engine: nothing processing, nothing deferred. */
function idle(llama: LlamaServer): Promise<unknown> {
  return waitFor(
    async () => {
      const load = await llama.load();
      return load.processing === 0 && load.deferred === 0;
    },
    'the engine idle',
    120_000,
    200,
  );
}
