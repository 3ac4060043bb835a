/**
 * Scenario 12: the real engine as the yardstick. One Debian llama-server (4 slots, the micro
 * model of `npm run engines:setup`) behind one frontend with its in-process bridge; offered
 * 0.5x to 4x its measured capacity with shedding off, static thresholds and a TTFT objective,
 * the policies' points interleaved in every round.
 *
 * Uses of bench/lib: the Scenario, BenchContext (quick, natsUrl, databaseUrl, group, log) and
 * ScenarioResult types and figureOver/verdict (lib/context), the SVG line chart (lib/svg, in
 * s12-real-engine-plots.ts); the loadgen's seeded generator; everything else is @sluice/testkit.
 */
import {
  FrontendStarted,
  LlamaModel,
  LlamaServer,
  realEngineUnavailable,
  startFrontend,
  uniqueNamespace,
  waitFor,
} from '@sluice/testkit';
import { BenchContext, CPU, Scenario, ScenarioResult } from '../lib/context';
import {
  closedLoopRate,
  PointResult,
  RequestShape,
  runPoint,
  unloaded,
} from './s12-real-engine-load';
import { POLICIES, Policy, policyBody, SETTINGS } from './s12-real-engine-policies';
import { report, Round } from './s12-real-engine-report';

const MODEL: LlamaModel = 'micro';
const SHAPE: RequestShape = { model: MODEL, promptWords: 16, maxTokens: 96 };
const ADMIN = 'bench:s12-admin-token';

interface Plan {
  loads: number[];
  rounds: number;
  durationS: number;
  warmupS: number;
  drainS: number;
  checkSettings: boolean;
}

const plan = (quick: boolean): Plan =>
  quick
    ? { loads: [1, 4], rounds: 1, durationS: 8, warmupS: 2, drainS: 6, checkSettings: false }
    : {
        loads: [0.5, 1, 2, 4],
        rounds: 2,
        durationS: 20,
        warmupS: 4,
        drainS: 15,
        checkSettings: true,
      };

export const realEngineScenario: Scenario = {
  id: 12,
  title: 'Real engine: llama.cpp server under overload',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const why = realEngineUnavailable();
    if (why) throw new Error(`the real llama.cpp server cannot run here: ${why}`);
    const p = plan(ctx.quick);
    const group = ctx.group();
    try {
      const llama = await LlamaServer.start({
        model: MODEL,
        slots: 4,
        cpu: CPU.client,
        group,
      });
      const fe = await startFrontend({
        natsUrl: ctx.natsUrl,
        namespace: uniqueNamespace('s12'),
        group,
        cpu: CPU.server,
        flags: [
          ...['--database-url', ctx.databaseUrl, '--admin-token', ADMIN],
          ...['--engine-target', `llamacpp=llama=${llama.url}`],
        ],
      });
      const setPolicy = (policy: Policy, objectiveMs: number) =>
        applyPolicy(fe, policyBody(policy, SHAPE.model, objectiveMs));
      await waitFor(
        async () => (await (await fetch(`${fe.url}/v1/models`)).text()).includes(SHAPE.model),
        'the engine known to the frontend',
      );

      await setPolicy('off', 0);
      const alone = await unloaded(fe.url, SHAPE, ctx.quick ? 5 : 10);
      const capacity = await closedLoopRate(
        fe.url,
        SHAPE,
        8,
        ctx.quick ? 8 : 16,
        ctx.quick ? 2 : 4,
      );
      // A user's wait worth keeping: what one request alone waits, plus a quarter of an answer
      // (a queued request waits about that long for one of the 4 slots to free).
      const objectiveMs = Math.round(3 * alone.ttftMs + alone.totalMs / 4);
      ctx.log(
        `unloaded TTFT ${alone.ttftMs.toFixed(0)} ms, answer ${alone.totalMs.toFixed(0)} ms; ` +
          `capacity ${capacity.toFixed(2)} req/s; objective ${objectiveMs} ms`,
      );

      const point = async (policy: Policy, load: number, seed: number): Promise<PointResult> => {
        await setPolicy(policy, objectiveMs);
        await idle(llama);
        const r = await runPoint({
          ...SHAPE,
          url: fe.url,
          rate: load * capacity,
          durationS: p.durationS,
          warmupS: p.warmupS,
          drainS: p.drainS,
          objectiveMs,
          seed,
          llama,
        });
        ctx.log(
          `${policy} at ${load}x: goodput ${r.goodput.toFixed(2)} req/s, refused ${r.refused}/${r.arrivals}, ` +
            `TTFT p50 ${fmtMs(r.ttftP50)} p99 ${fmtMs(r.ttftP99)}, slots busy ${r.slotsBusy.toFixed(1)}, deferred max ${r.deferredMax}`,
        );
        return r;
      };

      const settings = new Map<string, PointResult>();
      if (p.checkSettings) {
        for (const s of SETTINGS) settings.set(s, await point(s, 4, 1000));
      }
      const rounds: Round[] = [];
      for (let round = 0; round < p.rounds; round++) {
        const results = new Map<string, PointResult>();
        for (const [li, load] of p.loads.entries()) {
          const order = POLICIES.map((_, i) => POLICIES[(i + round + li) % POLICIES.length]);
          for (const policy of order) {
            results.set(`${policy}@${load}`, await point(policy, load, round * 100 + li));
          }
        }
        rounds.push({ results });
      }
      return report({
        capacity,
        alone,
        objectiveMs,
        loads: p.loads,
        rounds,
        settings,
        quick: ctx.quick,
        shape: SHAPE,
      });
    } finally {
      await group.stopAll();
    }
  },
};

async function applyPolicy(fe: FrontendStarted, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${fe.url}/busy_threshold`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN.split(':')[1]}` },
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

const fmtMs = (ms: number | null): string => (ms === null ? '–' : `${ms.toFixed(0)} ms`);
