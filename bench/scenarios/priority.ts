import { BenchContext } from '../lib/context';
import {
  alone,
  fleetCapacity,
  GOODPUT_THRESHOLDS as THRESHOLDS,
  PointResult,
  runPoint,
  startFleetFrontend,
  startSimWorkers,
} from '../lib/goodput';
import { describeProcess, requireLikeForLike } from '../lib/processes';
import { atLeast, atMost, below, figure, Plan, Scenario, ScenarioResult } from '../lib/scenario';
import { Started } from '../lib/sluice';
import { fmt, median, pct, rotate, uniqueNamespace } from '../lib/util';

const POLICIES = ['classes', 'ignored'] as const;
type Policy = (typeof POLICIES)[number];
const NAMES: Record<Policy, string> = {
  classes: 'priority classes',
  ignored: 'classes ignored',
};
/** The goodput scenario's static thresholds; the classes' factors are the defaults. */
const FLAGS: Record<Policy, string[]> = {
  classes: THRESHOLDS,
  ignored: [...THRESHOLDS, '--priority-header', 'none'],
};
/** Total offered load, as a multiple of capacity. */
const LOAD = 4;
/** The two mixes: critical at 0.8× capacity (fits the fleet), and at 2× (alone over it). */
const MIXES = [
  { id: 'fits', critical: 0.8, mix: 'critical=0.2,standard=0.4,sheddable=0.4' },
  { id: 'over', critical: 2, mix: 'critical=0.5,standard=0.25,sheddable=0.25' },
] as const;
type MixId = (typeof MIXES)[number]['id'];

interface Point extends PointResult {
  mix: MixId;
  policy: Policy;
  round: number;
}

interface Run {
  capacity: number;
  durationS: number;
  warmupS: number;
  drainS: number;
  rounds: number;
}

/**
 * Priority classes at 4× capacity (docs/security.md#priority-classes-who-may-set-x-sluice-priority; issue 42): two simulated workers with realistic
 * timing, open-loop arrivals with a fixed mix of classes, before a frontend with classes and one
 * that ignores them (`--priority-header none`), interleaved. Critical traffic that fits the fleet
 * should never be refused; critical traffic alone over it should leave lower classes nothing.
 */
export const priorityScenario: Scenario = {
  id: 'priority',
  title: 'Priority classes at 4× capacity',
  plan: (quick) => (quick ? { rounds: 1, seconds: 46 } : { rounds: 3, seconds: 480 }),
  async run(ctx: BenchContext, plan: Plan): Promise<ScenarioResult> {
    const g = ctx.group();
    try {
      const ns = uniqueNamespace('priority');
      await startSimWorkers(g, ctx, ns);
      const start = (name: string, flags: string[]): Promise<Started> =>
        startFleetFrontend(g, ctx, ns, name, flags);
      const [off, classes, ignored] = await Promise.all([
        start('off', ['--admission-control', 'none']),
        start('classes', FLAGS.classes),
        start('ignored', FLAGS.ignored),
      ]);
      const fe: Record<Policy, Started> = { classes, ignored };
      const all = [off, classes, ignored];
      const processes = POLICIES.map((p) =>
        describeProcess(`frontend, ${NAMES[p]}`, fe[p].proc.pid),
      );
      requireLikeForLike(processes);
      const capacity = await fleetCapacity(g, all, off, ctx.quick);
      const [durationS, warmupS, drainS] = ctx.quick ? [3, 1, 3] : [20, 6, 6];
      const run: Run = { capacity, durationS, warmupS, drainS, rounds: plan.rounds };
      ctx.log(`capacity ${fmt(capacity)} req/s`);
      const rate = Math.round(LOAD * capacity * 10) / 10;
      const points: Point[] = [];
      for (let round = 0; round < plan.rounds; round++) {
        for (const m of rotate(MIXES, round)) {
          for (const policy of rotate(POLICIES, round)) {
            const target = fe[policy];
            const r = await alone(all, [target, off], () =>
              runPoint(g, {
                ...{ target, observer: off, rate, durationS, warmupS, drainS },
                ...{ objectiveMs: null, mix: m.mix },
              }),
            );
            points.push({ ...r, mix: m.id, policy, round });
            const crit = r.classes.critical;
            ctx.log(
              `critical ${m.critical}×, ${NAMES[policy]}: critical refused ` +
                `${pct(crit.rejection_ratio, 2)}, ${fmt(crit.goodput_rps)} req/s; lower admitted ` +
                `while critical refused: ${r.lower_admitted_while_critical_refused}`,
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

/** One value per round: `f` of the round's point for the mix and policy. */
function perRound(
  points: Point[],
  run: Run,
  mix: MixId,
  policy: Policy,
  f: (x: Point) => number,
): number[] {
  return Array.from({ length: run.rounds }, (_, round) => {
    const x = points.find((y) => y.round === round && y.mix === mix && y.policy === policy);
    return x ? f(x) : NaN;
  });
}

const criticalRefused = (x: Point): number => 100 * x.classes.critical.rejection_ratio;

function figures(points: Point[], run: Run): ScenarioResult['figures'] {
  const ofCapacity = (x: Point): number => x.classes.critical.goodput_rps / run.capacity;
  const lower = (x: Point): number => x.lower_admitted_while_critical_refused;
  return [
    figure(
      `${LOAD}× total, critical 0.8× capacity: critical requests refused`,
      '%',
      perRound(points, run, 'fits', 'classes', criticalRefused),
      below(0.1),
    ),
    figure(
      `${LOAD}× total, critical 2× capacity: lower-class requests admitted in a second a critical one was refused`,
      'requests',
      perRound(points, run, 'over', 'classes', lower),
      atMost(0),
    ),
    figure(
      `${LOAD}× total, critical 2× capacity: critical successful requests/s ÷ capacity`,
      '×',
      perRound(points, run, 'over', 'classes', ofCapacity),
      atLeast(0.9),
    ),
    figure(
      `Classes ignored, critical 0.8× capacity: critical requests refused`,
      '%',
      perRound(points, run, 'fits', 'ignored', criticalRefused),
    ),
    figure(
      `Classes ignored, critical 2× capacity: critical successful requests/s ÷ capacity`,
      '×',
      perRound(points, run, 'over', 'ignored', ofCapacity),
    ),
  ];
}

function details(points: Point[], run: Run): string {
  const rows = MIXES.flatMap((m) =>
    POLICIES.map((p) => {
      const xs = points.filter((x) => x.mix === m.id && x.policy === p);
      const med = (f: (x: Point) => number | null): number => median(xs.map((x) => f(x) ?? NaN));
      const cls = (c: string, f: (k: PointResult['classes'][string]) => number) =>
        med((x) => (x.classes[c] ? f(x.classes[c]) : NaN));
      const refused = (c: string): string =>
        pct(
          cls(c, (k) => k.rejection_ratio),
          2,
        );
      const spread = xs.map((x) => criticalRefused(x).toFixed(2)).join(', ');
      return (
        `| ${m.critical}× | ${NAMES[p]} | ${refused('critical')} (${spread}) | ` +
        `${refused('standard')} | ${refused('sheddable')} | ` +
        `${fmt(cls('critical', (k) => k.goodput_rps))} | ${fmt(med((x) => x.goodput_rps))} | ` +
        `${fmt(
          med((x) => x.lower_admitted_while_critical_refused),
          0,
        )} | ${fmt(
          med((x) => x.ttft_p99_ms),
          0,
        )} | ${fmt(
          med((x) => x.window_aborted),
          0,
        )} |`
      );
    }),
  );
  return [
    'The goodput scenario’s two simulated workers (`--speedup 1`) on CPU 1 and its static',
    `thresholds (\`${THRESHOLDS.join(' ')}\`, default class factors sheddable 0.8 and critical`,
    '1.2), before two frontends on CPU 0: **priority classes**, and **classes ignored** (the same',
    'with `--priority-header none`: every request standard), plus one without shedding that',
    'measures capacity and observes the workers. During a point only the frontend measured and the',
    'observer run. Streaming chat requests of ~1,000 prompt tokens and `max_tokens` 64, sent open',
    `loop at ${LOAD}× capacity by bench/tools/goodput-client with \`x-sluice-priority\` set by a fixed`,
    'sequence: critical 20 %, standard 40 %, sheddable 40 % (critical 0.8× capacity), and critical',
    `50 %, standard and sheddable 25 % each (critical 2×). *Capacity*: ${fmt(run.capacity)} req/s,`,
    'measured once at the start as in the goodput scenario. Each point sends for',
    `${run.durationS} s; its figures are of the requests that arrived in [${run.warmupS} s, ${run.durationS} s); answers are awaited`,
    `${run.drainS} s after the last arrival, the rest cut off. *Lower admitted while critical refused*:`,
    'standard and sheddable requests not refused that arrived in a second in which a refused critical',
    `request arrived. Mixes and frontends interleaved, ${run.rounds} round(s); medians over the rounds, the`,
    'critical refused share of each round in brackets.',
    '',
    '| critical load | frontend | critical refused (rounds) | standard refused | sheddable refused | critical succeeded req/s | all succeeded req/s | lower admitted while critical refused | TTFT p99 ms | cut off |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}
