/**
 * Scenario 12: the real engine as the yardstick. One Debian llama-server (4 slots, the micro
 * model of `npm run engines:setup`) behind three frontends, one per policy, each with its
 * in-process bridge; offered 0.5x to 4x its measured capacity with shedding off, static
 * thresholds and a TTFT objective, the policies' points interleaved in every round.
 *
 * Uses of bench/lib: the Scenario, BenchContext (quick, natsUrl, databaseUrl, group, log) and
 * ScenarioResult types and figureOver/verdict (lib/context), the SVG line chart (lib/svg, in
 * s12-real-engine-plots.ts); the loadgen's seeded generator; everything else is @sluice/testkit.
 */
import {
  FrontendStarted,
  LlamaModel,
  LlamaServer,
  ProcessGroup,
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
        durationS: 15,
        warmupS: 3,
        drainS: 10,
        checkSettings: true,
      };

/** One frontend per policy, each with its own bridge and TTFT model, in front of the engine. */
type Frontends = Record<(typeof POLICIES)[number], FrontendStarted>;

async function startFrontends(ctx: BenchContext, llama: LlamaServer, group: ProcessGroup) {
  const start = () =>
    startFrontend({
      natsUrl: ctx.natsUrl,
      namespace: uniqueNamespace('s12'),
      group,
      cpu: CPU.server,
      flags: [
        ...['--database-url', ctx.databaseUrl, '--admin-token', ADMIN],
        ...['--engine-target', `llamacpp=llama=${llama.url}`],
      ],
    });
  const [off, stat, objective] = await Promise.all([start(), start(), start()]);
  const fes: Frontends = { off, static: stat, objective };
  for (const fe of Object.values(fes)) {
    await waitFor(
      async () => (await (await fetch(`${fe.url}/v1/models`)).text()).includes(SHAPE.model),
      'the engine known to the frontend',
    );
  }
  return fes;
}

/** The unloaded request and the capacity, through the frontend without shedding. */
async function probe(ctx: BenchContext, off: FrontendStarted) {
  const alone = await unloaded(off.url, SHAPE, ctx.quick ? 5 : 10);
  const capacity = await closedLoopRate(off.url, SHAPE, 8, ctx.quick ? 8 : 16, ctx.quick ? 2 : 4);
  // A user's wait worth keeping: what one request alone waits, plus a quarter of an answer
  // (a queued request waits about that long for one of the 4 slots to free).
  const objectiveMs = Math.round(3 * alone.ttftMs + alone.totalMs / 4);
  ctx.log(
    `unloaded TTFT ${alone.ttftMs.toFixed(0)} ms, answer ${alone.totalMs.toFixed(0)} ms; ` +
      `capacity ${capacity.toFixed(2)} req/s; objective ${objectiveMs} ms`,
  );
  return { alone, capacity, objectiveMs };
}

export const realEngineScenario: Scenario = {
  id: 12,
  title: 'Real engine: llama.cpp server under overload',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const why = realEngineUnavailable();
    if (why) throw new Error(`the real llama.cpp server cannot run here: ${why}`);
    const p = plan(ctx.quick);
    const group = ctx.group();
    try {
      const llama = await LlamaServer.start({ model: MODEL, slots: 4, cpu: CPU.client, group });
      const fes = await startFrontends(ctx, llama, group);
      await applyPolicy(fes.off, policyBody('off', SHAPE.model, 0));
      const { alone, capacity, objectiveMs } = await probe(ctx, fes.off);
      const point = async (fe: FrontendStarted, policy: Policy, load: number, seed: number) => {
        await applyPolicy(fe, policyBody(policy, SHAPE.model, objectiveMs));
        await idle(llama);
        const r = await runPoint({
          ...{ ...SHAPE, url: fe.url, rate: load * capacity, objectiveMs, seed, llama },
          ...{ durationS: p.durationS, warmupS: p.warmupS, drainS: p.drainS },
        });
        ctx.log(`${policy} at ${load}x: ${describe(r)}`);
        return r;
      };
      // The settings, one after the other on the static frontend (the objective alone first,
      // while its TTFT model has learnt from no other setting).
      const settings = new Map<string, PointResult>();
      for (const s of p.checkSettings ? SETTINGS : []) {
        settings.set(s, await point(fes.static, s, 4, 1000));
      }
      const rounds: Round[] = [];
      for (let round = 0; round < p.rounds; round++) {
        const results = new Map<string, PointResult>();
        for (const [li, load] of p.loads.entries()) {
          for (const [i] of POLICIES.entries()) {
            const policy = POLICIES[(i + round + li) % POLICIES.length];
            results.set(
              `${policy}@${load}`,
              await point(fes[policy], policy, load, round * 100 + li),
            );
          }
        }
        rounds.push({ results });
      }
      const shape = SHAPE;
      return report({
        capacity,
        alone,
        objectiveMs,
        loads: p.loads,
        rounds,
        settings,
        quick: ctx.quick,
        shape,
      });
    } finally {
      await group.stopAll();
    }
  },
};

const describe = (r: PointResult): string =>
  `goodput ${r.goodput.toFixed(2)} req/s, refused ${r.refused}/${r.arrivals}, ` +
  `TTFT p50 ${fmtMs(r.ttftP50)} p99 ${fmtMs(r.ttftP99)}, ` +
  `slots busy ${r.slotsBusy.toFixed(1)}, deferred max ${r.deferredMax}`;

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
