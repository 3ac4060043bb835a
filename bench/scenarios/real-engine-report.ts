/** The real-engine scenario's figures and tables, from its points. */
import { PointResult, RequestShape } from './real-engine-load';
import { CONTROL, POLICIES, Policy, policyFlags, SUBJECTS } from './real-engine-policies';
import { atLeast, atMost, figure, ScenarioResult } from '../lib/scenario';
import { fmt, median } from '../lib/util';

export interface Run {
  shape: RequestShape;
  capacity: number;
  alone: { ttftMs: number; totalMs: number };
  objectiveMs: number;
  loads: number[];
  rounds: number;
  /** Slices of each point, interleaved with the other policies' (`passes` passes). */
  passes: number;
  durationS: number;
  warmupS: number;
  drainS: number;
}

export interface Point extends PointResult {
  policy: Policy;
  load: number;
  round: number;
}

const pick = (points: Point[], round: number, policy: Policy, load: number) =>
  points.find((x) => x.round === round && x.policy === policy && x.load === load);

/** One value per round. */
const perRound = (run: Run, f: (round: number) => number): number[] =>
  Array.from({ length: run.rounds }, (_, round) => f(round));

/**
 * Each load's best policy, chosen once: the one of POLICIES with the most requests within the
 * objective summed over the rounds. Picking the best afresh in each round would divide by the
 * luckiest of three noisy values, and a policy equal to the best would score below 1.
 */
function bestByLoad(points: Point[], run: Run): Map<number, Policy> {
  const total = (p: Policy, load: number) =>
    points.filter((x) => x.policy === p && x.load === load).reduce((a, x) => a + x.goodput, 0);
  return new Map(
    run.loads.map((load) => [
      load,
      POLICIES.reduce((b: Policy, p) => (total(p, load) > total(b, load) ? p : b), POLICIES[0]),
    ]),
  );
}

export function figures(points: Point[], run: Run): ScenarioResult['figures'] {
  const top = Math.max(...run.loads);
  const best = bestByLoad(points, run);
  /** Per round: the lowest over loads of the policy's goodput ÷ the load's best's, same round. */
  const ofBest = (policy: Policy) =>
    perRound(run, (round) =>
      Math.min(
        ...run.loads.map((load) => {
          const b = pick(points, round, best.get(load) as Policy, load)?.goodput ?? 0;
          const mine = pick(points, round, policy, load)?.goodput ?? NaN;
          return b > 0 ? mine / b : 1;
        }),
      ),
    );
  const p99OfOff = (policy: Policy) =>
    perRound(
      run,
      (round) =>
        (pick(points, round, policy, top)?.ttftP99 ?? NaN) /
        (pick(points, round, 'off', top)?.ttftP99 ?? NaN),
    );
  return [
    figure(
      'llama.cpp, TTFT objective: requests/s within the objective ÷ the best policy, lowest over loads',
      '×',
      ofBest('objective'),
      atLeast(0.9),
    ),
    figure(
      `llama.cpp at ${top}×: admitted TTFT p99, static ÷ off`,
      '×',
      p99OfOff('static'),
      atMost(0.33),
    ),
    figure(
      `llama.cpp at ${top}×: admitted TTFT p99, objective ÷ off`,
      '×',
      p99OfOff('objective'),
      atMost(0.33),
    ),
    figure(
      'llama.cpp, static: within the objective ÷ the best, lowest over loads',
      '×',
      ofBest('static'),
    ),
    figure(
      'llama.cpp, off: within the objective ÷ the best, lowest over loads',
      '×',
      ofBest('off'),
    ),
    figure(
      `llama.cpp, ${CONTROL} (A/A control, not in the best): within the objective ÷ the best, lowest over loads`,
      '×',
      ofBest(CONTROL),
    ),
  ];
}

/** Median and, over several rounds, the spread in brackets. */
function spread(xs: number[], digits: number): string {
  const ys = xs.filter(Number.isFinite);
  if (ys.length < 2) return fmt(ys[0], digits);
  return `${fmt(median(ys), digits)} (${fmt(Math.min(...ys), digits)}–${fmt(Math.max(...ys), digits)})`;
}

const HEAD = [
  '| policy | within the objective req/s | refused | TTFT p50 ms | TTFT p99 ms | slots busy (of 4) | deferred max |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
];
const refusedShare = (x: PointResult): number => x.refused / Math.max(1, x.arrivals);
const COLUMNS: Array<[(x: PointResult) => number | null, number]> = [
  [(x) => x.goodput, 2],
  [refusedShare, 2],
  [(x) => x.ttftP50, 0],
  [(x) => x.ttftP99, 0],
  [(x) => x.slotsBusy, 1],
  [(x) => x.deferredMax, 0],
];
const row = (name: string, xs: PointResult[]): string =>
  `| ${name} | ${COLUMNS.map(([f, d]) =>
    spread(
      xs.map((x) => f(x) ?? NaN),
      d,
    ),
  ).join(' | ')} |`;

export function details(
  points: Point[],
  run: Run,
  settings: ReadonlyMap<string, PointResult>,
): string {
  const lines = [
    "Debian's `llama-server` (llama.cpp 0.7.0, `-np 4 -c 8192 -t 1`, the random-weight `micro` model",
    'of `npm run engines:setup`) on CPU 1 behind four frontends on CPU 0, one per policy (each with',
    'its own TTFT model), each with the in-process bridge (`--engine-target llamacpp=…`). Each request:',
    `a ${run.shape.promptWords}-word prompt, ${run.shape.maxTokens} tokens streamed (\`ignore_eos\`), sent open loop from the bench's`,
    `own process (Poisson arrivals, the same for every policy). *Capacity*: ${fmt(run.capacity, 2)} req/s, the`,
    'completions/s of 8 closed-loop clients through the frontend without shedding; alone a request',
    `had its first token after ${fmt(run.alone.ttftMs, 0)} ms and its answer after ${fmt(run.alone.totalMs, 0)} ms. *Objective*: 3 × that`,
    `first token + a quarter of that answer = **${run.objectiveMs} ms**. A policy's point at a load is`,
    `${run.passes} slice(s) pooled: each sends for ${run.durationS} s on an idle engine and counts the arrivals in`,
    `[${run.warmupS} s, ${run.durationS} s); answers are awaited ${run.drainS} s after its last arrival, and a request still`,
    'without a first token then counts with the time it had waited. A pass runs one slice of each',
    'policy in turn (the same arrivals for each), so a spell of slow machine falls on all of them.',
    '*Within the objective*: requests/s, counted by arrival, whose first token met the objective.',
    `${run.rounds} round(s); medians, the spread over rounds in brackets.`,
    '',
    `Policies: ${POLICIES.map((p) => `**${p}** \`${policyFlags(p)}\``).join('; ')}. **${CONTROL}**: an`,
    'A/A control, the static policy on a fourth frontend, run in the same rounds and left out of',
    '"the best": what the figures give it is what they give a policy identical to one of the three.',
    '*The best* at a load: the policy of the three with the most requests within the objective over',
    "all rounds, chosen once; a round's ratio divides by that policy's value in the same round.",
    '',
  ];
  const best = bestByLoad(points, run);
  for (const load of run.loads) {
    lines.push(
      `**${load}× capacity** (${fmt(load * run.capacity, 2)} req/s offered; the best: ${best.get(load)})`,
      '',
      ...HEAD,
    );
    for (const p of SUBJECTS)
      lines.push(
        row(
          p,
          points.filter((x) => x.policy === p && x.load === load),
        ),
      );
    lines.push('');
  }
  if (settings.size > 0) {
    lines.push(
      "**Settings at 4× capacity**, before the rounds, their slices interleaved on the static policy's frontend: which thresholds keep the 4 slots busy and the wait short.",
      '',
      ...HEAD,
    );
    for (const [name, x] of settings)
      lines.push(row(`${name} (\`${policyFlags(name as Policy)}\`)`, [x]));
    lines.push('');
  }
  lines.push(
    '"refused": the share of arrivals refused. With shedding off a request is refused only while',
    "no worker is up: a server holding over a thousand requests can leave the bridge's scrapes",
    'unanswered past `--down-after-ms` (docs/engines.md, "llama.cpp server").',
  );
  return lines.join('\n');
}
