import { BenchContext } from '../lib/context';
import {
  alone,
  fleetCapacity,
  GOODPUT_THRESHOLDS as THRESHOLDS,
  PointResult,
  runPoint,
  startFleetFrontend,
  startSimWorkers,
  unloadedTtft,
} from '../lib/goodput';
import { describeProcess, requireLikeForLike } from '../lib/processes';
import { atLeast, atMost, figure, Plan, Scenario, ScenarioResult } from '../lib/scenario';
import { Started } from '../lib/sluice';
import { fmt, median, pct, rotate, uniqueNamespace } from '../lib/util';

const POLICIES = ['off', 'static', 'objective'] as const;
type Policy = (typeof POLICIES)[number];
const NAMES: Record<Policy, string> = {
  off: 'off',
  static: 'static thresholds',
  objective: 'TTFT objective',
};
/** The objective: this multiple of the unloaded TTFT p50, about two full engine steps. */
const OBJECTIVE_MULTIPLE = 10;

interface Point extends PointResult {
  load: number;
  policy: Policy;
  round: number;
}

interface Run {
  capacity: number;
  objectiveMs: number;
  loads: number[];
  durationS: number;
  warmupS: number;
  drainS: number;
  rounds: number;
}

/**
 * Two simulated workers with realistic timing, open-loop arrivals at multiples of their measured
 * capacity, and three frontends before them: no shedding, the static thresholds, and the
 * thresholds with a TTFT objective. Only the frontend measured (and the one without shedding,
 * which observes the workers) runs during a point.
 */
export const goodputScenario: Scenario = {
  id: 'goodput',
  title: 'Goodput under overload',
  plan: (quick) => (quick ? { rounds: 1, seconds: 52 } : { rounds: 3, seconds: 930 }),
  async run(ctx: BenchContext, plan: Plan): Promise<ScenarioResult> {
    const g = ctx.group();
    try {
      const ns = uniqueNamespace('goodput');
      await startSimWorkers(g, ctx, ns);
      const start = (policy: Policy, flags: string[]): Promise<Started> =>
        startFleetFrontend(g, ctx, ns, policy, flags);
      const [off, stat] = await Promise.all([
        start('off', ['--admission-control', 'none']),
        start('static', THRESHOLDS),
      ]);
      const ttft = await alone([stat], [], () => unloadedTtft(g, off.url, ctx.quick));
      const objectiveMs = Math.round(OBJECTIVE_MULTIPLE * ttft);
      const objective = await start('objective', [
        ...THRESHOLDS,
        '--ttft-slo-ms',
        String(objectiveMs),
      ]);
      const fe: Record<Policy, Started> = { off, static: stat, objective };
      const all = [off, stat, objective];
      const processes = POLICIES.map((p) =>
        describeProcess(`frontend, ${NAMES[p]}`, fe[p].proc.pid),
      );
      requireLikeForLike(processes);
      const capacity = await fleetCapacity(g, all, off, ctx.quick);
      const [durationS, warmupS, drainS] = ctx.quick ? [4, 2, 2] : [18, 8, 6];
      const run: Run = {
        ...{ capacity, objectiveMs, durationS, warmupS, drainS, rounds: plan.rounds },
        loads: ctx.quick ? [0.5, 4] : [0.5, 1, 2, 4],
      };
      ctx.log(
        `capacity ${fmt(capacity)} req/s; unloaded TTFT p50 ${fmt(ttft, 0)} ms: objective ${objectiveMs} ms`,
      );
      const points: Point[] = [];
      for (let round = 0; round < plan.rounds; round++) {
        for (const load of run.loads) {
          const rate = Math.round(load * capacity * 10) / 10;
          for (const policy of rotate(POLICIES, round)) {
            const target = fe[policy];
            const r = await alone(all, [target, off], () =>
              runPoint(g, { target, observer: off, rate, durationS, warmupS, drainS, objectiveMs }),
            );
            points.push({ ...r, load, policy, round });
            ctx.log(
              `${load}× ${NAMES[policy]}: ${fmt(r.goodput_slo_rps)} req/s within the objective, ` +
                `rejected ${pct(r.rejection_ratio)}, TTFT p99 ${fmt(r.ttft_p99_ms, 0)} ms`,
            );
          }
        }
      }
      return { figures: figures(points, run), details: details(points, run), processes };
    } finally {
      await g.stopAll();
    }
  },
};

/** One value per round: `f` of the round's points. */
function perRound(
  points: Point[],
  run: Run,
  f: (pick: (load: number, p: Policy) => Point | undefined) => number,
): number[] {
  return Array.from({ length: run.rounds }, (_, round) =>
    f((load, policy) =>
      points.find((x) => x.round === round && x.load === load && x.policy === policy),
    ),
  );
}

function figures(points: Point[], run: Run): ScenarioResult['figures'] {
  const top = Math.max(...run.loads);
  const best = (round: number): number =>
    Math.max(...points.filter((x) => x.round === round).map((x) => x.goodput_slo_rps));
  const ofBest = (p: Policy): number[] =>
    Array.from({ length: run.rounds }, (_, r) => {
      const x = points.find((y) => y.round === r && y.load === top && y.policy === p);
      return (x?.goodput_slo_rps ?? NaN) / best(r);
    });
  const growth = (p: Policy): number[] =>
    perRound(
      points,
      run,
      (pick) => (pick(top, p)?.ttft_p99_ms ?? NaN) / (pick(0.5, p)?.ttft_p99_ms ?? NaN),
    );
  const ofCapacity = (p: Policy): number[] =>
    perRound(points, run, (pick) => (pick(top, p)?.goodput_rps ?? NaN) / run.capacity);
  const met = (p: Policy): number[] =>
    perRound(points, run, (pick) => 100 * (pick(top, p)?.admitted_met_share ?? NaN));
  const at = `at ${top}× capacity`;
  return [
    figure(
      `TTFT objective ${at}: requests/s within the objective ÷ the best of any policy at any load`,
      '×',
      ofBest('objective'),
      atLeast(0.9),
    ),
    figure(
      `TTFT objective ${at}: admitted requests within the objective`,
      '%',
      met('objective'),
      atLeast(99),
    ),
    figure(
      `Static thresholds ${at}: successful requests/s ÷ capacity`,
      '×',
      ofCapacity('static'),
      atLeast(0.9),
    ),
    figure(`Static thresholds: TTFT p99 ${at} ÷ at 0.5×`, '×', growth('static'), atMost(2)),
    figure(
      `No shedding: TTFT p99 ${at} ÷ at 0.5× (shows the problem)`,
      '×',
      growth('off'),
      atLeast(5),
    ),
    figure(
      `Static thresholds ${at}: requests/s within the objective ÷ the best`,
      '×',
      ofBest('static'),
    ),
    figure(`No shedding ${at}: requests/s within the objective ÷ the best`, '×', ofBest('off')),
    figure(`TTFT objective ${at}: successful requests/s ÷ capacity`, '×', ofCapacity('objective')),
    figure(`No shedding ${at}: successful requests/s ÷ capacity`, '×', ofCapacity('off')),
  ];
}

function details(points: Point[], run: Run): string {
  const rows = run.loads.flatMap((load) =>
    POLICIES.map((p) => {
      const xs = points.filter((x) => x.load === load && x.policy === p);
      const m = (f: (x: Point) => number | null): number => median(xs.map((x) => f(x) ?? NaN));
      return (
        `| ${load}× | ${fmt(load * run.capacity)} | ${NAMES[p]} | ${fmt(m((x) => x.goodput_slo_rps))} | ` +
        `${fmt(m((x) => x.goodput_rps))} | ${pct(m((x) => x.rejection_ratio))} | ${pct(
          m((x) => x.admitted_met_share),
          1,
        )} | ` +
        `${fmt(
          m((x) => x.ttft_p50_ms),
          0,
        )} | ${fmt(
          m((x) => x.ttft_p99_ms),
          0,
        )} | ${fmt(
          m((x) => x.latency_p50_ms),
          0,
        )} | ` +
        `${fmt(
          m((x) => x.latency_p99_ms),
          0,
        )} | ${fmt(
          m((x) => x.window_aborted),
          0,
        )} |`
      );
    }),
  );
  return [
    'Two simulated workers (`--speedup 1`: the Dynamo mocker timing model, 16,384 KV blocks of 16',
    'tokens, at most 256 sequences and 8,192 batched tokens each) on CPU 1, reporting on NATS.',
    'Three frontends before them on CPU 0: **off** (`--admission-control none`), **static',
    `thresholds** (\`${THRESHOLDS.join(' ')}\`) and **TTFT objective** (the same with`,
    `\`--ttft-slo-ms ${run.objectiveMs}\`: ${OBJECTIVE_MULTIPLE}× the unloaded TTFT p50, about two full engine steps, measured`,
    'at the start through the frontend without shedding). During a point only the frontend measured',
    'and the one without shedding run; the others are stopped (SIGSTOP), since idle frontends on the',
    'same core still wake for every report. Streaming chat requests of ~1,000 prompt tokens and',
    '`max_tokens` 64, sent open loop at a fixed rate by bench/tools/goodput-client (the loadgen',
    `app's modules) on CPU 1. *Capacity*: ${fmt(run.capacity)} req/s, the completions/s of 600`,
    'closed-loop clients through the frontend without shedding, measured once at the start; loads',
    `are multiples of it. Each point sends for ${run.durationS} s; its figures are of the requests that arrived`,
    `in [${run.warmupS} s, ${run.durationS} s), whenever they ended; answers are awaited ${run.drainS} s after the last arrival, the`,
    'rest cut off. *Within the objective*: succeeded with the first token within the objective.',
    '*Best*: per round, the highest requests/s within the objective of any policy at any load.',
    `Policies interleaved, ${run.rounds} round(s) per load; medians over the rounds below.`,
    '',
    '| load | offered req/s | policy | within the objective req/s | succeeded req/s | rejected | admitted within the objective | TTFT p50 ms | TTFT p99 ms | e2e p50 ms | e2e p99 ms | cut off |',
    '| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}
