import { BenchContext, BenchGroup } from '../lib/context';
import {
  alone,
  fleetCapacity,
  GOODPUT_THRESHOLDS,
  PointResult,
  sendLoad,
  settle,
  startFleetFrontend,
  startSimWorkers,
} from '../lib/goodput';
import { describeProcess, requireLikeForLike } from '../lib/processes';
import {
  atLeast,
  atMost,
  below,
  figure,
  Plan,
  Scenario,
  ScenarioResult,
  within,
} from '../lib/scenario';
import { Started } from '../lib/sluice';
import { createTenant, TENANT_ADMIN_FLAGS } from '../lib/tenants';
import { fmt, rotate, uniqueNamespace } from '../lib/util';
import { tenantsDetails } from './tenants-details';

/**
 * Requests the router queue holds: only the requests of tenants under their share wait there
 * (the rest are refused at once), at most a tenant's share of the fleet's turnover.
 */
export const QUEUE_DEPTH = 512;
/** A wait in the queue is bounded, so the window's last admitted arrivals end within the drain. */
export const QUEUE_TIMEOUT_MS = 5000;
/**
 * The product's default admission: the goodput scenario's busy thresholds (token-capacity). While
 * every worker is busy, a tenant under its share goes to a worker with critical headroom or waits
 * in the router queue, the others are refused (decisions 0225, 0230).
 */
export const FAIR_SHARE_FLAGS = [
  ...GOODPUT_THRESHOLDS,
  ...['--router-queue-max-depth', String(QUEUE_DEPTH)],
  ...['--router-queue-timeout-ms', String(QUEUE_TIMEOUT_MS), ...TENANT_ADMIN_FLAGS],
];
/**
 * Offered loads, as multiples of capacity. `floor`: A's load beside B's that makes 0.9× of
 * capacity in total, the least the target's goodput allows.
 */
export const LOAD = { heavy: 4, light: 0.3, weighted: 2, floor: 0.6 } as const;
export const WEIGHTED = 3;

/**
 * What each point sends: A and B with keys of equal weight, without keys, B alone, 3:1, and
 * `floor`: A and B making 0.9× capacity in total through the frontend without shedding. B's
 * TTFT there is the least any admission policy can give B while the fleet serves 0.9× of its
 * capacity: the frontend chooses what it sends, not how the engine batches it.
 */
export const POINTS = ['equal', 'none', 'alone', 'weighted', 'floor'] as const;
export type PointId = (typeof POINTS)[number];
/** A quick run: the point the fair share is judged on, and B alone for its TTFT. */
const QUICK_POINTS: readonly PointId[] = ['equal', 'alone'];
/**
 * A quick run's capacity instead of the probe (~15 s, more than half of the quick plan): the two
 * simulated workers' order of magnitude as the full run measures it. Only the offered loads
 * derive from it; a quick run reports it as nominal.
 */
export const QUICK_CAPACITY = 60;

export interface Pair {
  point: PointId;
  round: number;
  a: PointResult | null;
  b: PointResult;
}

export interface Run {
  capacity: number;
  durationS: number;
  warmupS: number;
  drainS: number;
  rounds: number;
  /** Capacity was `QUICK_CAPACITY`, not measured. */
  nominal: boolean;
}

/**
 * Weighted fair share between tenants on a saturated fleet (docs/api.md#tenants, decision 0195;
 * issue 43): the goodput scenario's two simulated workers, one frontend with tenants and the
 * router queue, and two open-loop clients at once, one per tenant key.
 */
export const tenantsScenario: Scenario = {
  id: 'tenants',
  title: 'Tenant fair share on a saturated fleet',
  plan: (quick) => (quick ? { rounds: 1, seconds: 25 } : { rounds: 3, seconds: 300 }),
  async run(ctx: BenchContext, plan: Plan): Promise<ScenarioResult> {
    const g = ctx.group();
    try {
      const ns = uniqueNamespace('tenants');
      await startSimWorkers(g, ctx, ns);
      // A quick run takes the nominal capacity: no probe, so no frontend without shedding.
      const [fe, off] = await Promise.all([
        startFleetFrontend(g, ctx, ns, 'tenants', FAIR_SHARE_FLAGS),
        ctx.quick ? null : startFleetFrontend(g, ctx, ns, 'off', ['--admission-control', 'none']),
      ]);
      const processes = [describeProcess('frontend, tenants and default admission', fe.proc.pid)];
      if (off) {
        processes.push(describeProcess('frontend without shedding (capacity probe)', off.proc.pid));
      }
      requireLikeForLike(processes);
      const all = off ? [off, fe] : [fe];
      const keys = {
        a: await createTenant(fe, 'tenant-a', 1),
        b: await createTenant(fe, 'tenant-b', 1),
        a3: await createTenant(fe, 'tenant-a3', WEIGHTED),
        b1: await createTenant(fe, 'tenant-b1', 1),
      };
      const capacity = off ? await fleetCapacity(g, all, off, ctx.quick) : QUICK_CAPACITY;
      ctx.log(`capacity ${fmt(capacity)} req/s${off ? '' : ' (nominal)'}`);
      // A request takes ~6 s at capacity (64 decode steps of ~100 ms) after up to the queue's
      // timeout: the drain lets the window's last arrivals finish. Rounds make the full run; a
      // quick one has a shorter window and drain (its last waiters may be cut off).
      const [durationS, warmupS, drainS] = ctx.quick ? [6, 2, 8] : [10, 3, 12];
      const run: Run = {
        ...{ capacity, durationS, warmupS, drainS },
        ...{ rounds: plan.rounds, nominal: off === null },
      };
      const rate = (x: number): number => Math.round(x * capacity * 10) / 10;
      const sends: Record<PointId, Array<{ key?: string; rate: number }>> = {
        equal: [
          { key: keys.a, rate: rate(LOAD.heavy) },
          { key: keys.b, rate: rate(LOAD.light) },
        ],
        none: [{ rate: rate(LOAD.heavy) }, { rate: rate(LOAD.light) }],
        alone: [{ key: keys.b, rate: rate(LOAD.light) }],
        weighted: [
          { key: keys.a3, rate: rate(LOAD.weighted) },
          { key: keys.b1, rate: rate(LOAD.weighted) },
        ],
        floor: [{ rate: rate(LOAD.floor) }, { rate: rate(LOAD.light) }],
      };
      const pairs: Pair[] = [];
      for (let round = 0; round < plan.rounds; round++) {
        for (const point of rotate(ctx.quick ? QUICK_POINTS : POINTS, round)) {
          // The floor goes through the frontend without shedding (a full run has it).
          const target = point === 'floor' && off ? off : fe;
          const rs = await alone(all, [target], () =>
            sendAll(
              g,
              target,
              run,
              sends[point].map((s) => ({ bearer: s.key, rate: s.rate })),
            ),
          );
          const pair: Pair = {
            point,
            round,
            a: rs.length > 1 ? rs[0] : null,
            b: rs[rs.length - 1],
          };
          pairs.push(pair);
          ctx.log(
            `${point}: B refused ${fmt(100 * pair.b.rejection_ratio, 2)} %, B TTFT p99 ` +
              `${fmt(pair.b.ttft_p99_ms, 0)} ms, A ${fmt(pair.a?.goodput_rps)} + B ` +
              `${fmt(pair.b.goodput_rps)} req/s succeeded`,
          );
        }
      }
      return { figures: figures(pairs, run), details: tenantsDetails(pairs, run), processes };
    } finally {
      await g.stopAll();
    }
  },
};

/** The clients of one point at once, one per tenant key, then a wait for idle workers. */
async function sendAll(
  g: BenchGroup,
  fe: Started,
  run: Run,
  sends: Array<{ bearer?: string; rate: number }>,
): Promise<PointResult[]> {
  const { durationS, warmupS, drainS } = run;
  const rs = await Promise.all(
    sends.map((s) =>
      sendLoad(g, {
        ...{ target: fe, observer: fe, rate: s.rate, bearer: s.bearer, objectiveMs: null },
        ...{ durationS, warmupS, drainS },
      }),
    ),
  );
  await settle(fe);
  return rs;
}

/** One value per round: `f` of the round's point. */
function perRound(pairs: Pair[], run: Run, point: PointId, f: (x: Pair) => number): number[] {
  return Array.from({ length: run.rounds }, (_, round) => {
    const x = pairs.find((y) => y.round === round && y.point === point);
    return x ? f(x) : NaN;
  });
}

export const admitted = (r: PointResult): number => r.window_arrivals - r.window_rejected;
export const bRefused = (x: Pair): number => 100 * x.b.rejection_ratio;
const total = (x: Pair): number => (x.a?.goodput_rps ?? 0) + x.b.goodput_rps;

function figures(pairs: Pair[], run: Run): ScenarioResult['figures'] {
  const ttftOfAlone = (x: Pair): number => {
    const solo = pairs.find((y) => y.round === x.round && y.point === 'alone');
    return (x.b.ttft_p99_ms ?? NaN) / (solo?.b.ttft_p99_ms ?? NaN);
  };
  const ofA = (x: Pair): number => (x.b.ttft_p99_ms ?? NaN) / (x.a?.ttft_p99_ms ?? NaN);
  const ofCapacity = (x: Pair): number => total(x) / run.capacity;
  const ratio = (x: Pair): number => (x.a ? admitted(x.a) : NaN) / admitted(x.b) / WEIGHTED;
  const equal = `Tenants of equal weight, A ${LOAD.heavy}× and B ${LOAD.light}× capacity`;
  const none = `No tenant keys, the same load`;
  const floor = `No shedding, A ${LOAD.floor}× + B ${LOAD.light}× (${fmt(LOAD.floor + LOAD.light)}× capacity in total)`;
  return [
    figure(
      `${equal}: B's requests refused`,
      '%',
      perRound(pairs, run, 'equal', bRefused),
      below(1),
    ),
    figure(
      `${equal}: B's TTFT p99 ÷ B's alone`,
      '×',
      perRound(pairs, run, 'equal', ttftOfAlone),
      atMost(1.5),
    ),
    figure(`${equal}: B's TTFT p99 ÷ A's`, '×', perRound(pairs, run, 'equal', ofA)),
    figure(
      `${equal}: successful requests/s of both ÷ capacity`,
      '×',
      perRound(pairs, run, 'equal', ofCapacity),
      atLeast(0.9),
    ),
    figure(
      `Weights ${WEIGHTED}:1, both ${LOAD.weighted}× capacity: admitted A ÷ admitted B ÷ ${WEIGHTED}`,
      '×',
      perRound(pairs, run, 'weighted', ratio),
      within(0.9, 1.1),
    ),
    figure(`${floor}: B's TTFT p99 ÷ B's alone`, '×', perRound(pairs, run, 'floor', ttftOfAlone)),
    figure(`${none}: B's requests refused`, '%', perRound(pairs, run, 'none', bRefused)),
    figure(`${none}: B's TTFT p99 ÷ B's alone`, '×', perRound(pairs, run, 'none', ttftOfAlone)),
    figure(
      `${none}: successful requests/s ÷ capacity`,
      '×',
      perRound(pairs, run, 'none', ofCapacity),
    ),
  ];
}
