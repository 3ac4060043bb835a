/** Scenario 12's figures, tables and plots from its rounds. */
import { Figure, figureOver, ScenarioResult, verdict } from '../lib/context';
import { PointResult, RequestShape } from './s12-real-engine-load';
import { at, plots } from './s12-real-engine-plots';
import { POLICIES, Policy, policyFlags } from './s12-real-engine-policies';

export interface Round {
  /** By `${policy}@${load}`. */
  readonly results: ReadonlyMap<string, PointResult>;
}

export interface Outcome {
  readonly capacity: number;
  readonly alone: { ttftMs: number; totalMs: number };
  readonly objectiveMs: number;
  readonly loads: number[];
  readonly rounds: Round[];
  readonly settings: ReadonlyMap<string, PointResult>;
  readonly quick: boolean;
  readonly shape: RequestShape;
}

/** Per round: a value computed from its points (null when a point is missing). */
function perRound(o: Outcome, f: (r: Round) => number | null | undefined): number[] {
  return o.rounds
    .map(f)
    .filter((x): x is number => x !== null && x !== undefined && Number.isFinite(x));
}

function goodputShare(o: Outcome, r: Round): number | null {
  let lowest = Infinity;
  for (const load of o.loads) {
    const best = Math.max(...POLICIES.map((p) => at(r, p, load)?.goodput ?? 0));
    const mine = at(r, 'objective', load)?.goodput;
    if (mine === undefined) return null;
    lowest = Math.min(lowest, best > 0 ? mine / best : 1);
  }
  return lowest;
}

function p99Ratio(o: Outcome, r: Round, policy: Policy): number | null {
  const top = Math.max(...o.loads);
  const mine = at(r, policy, top)?.ttftP99;
  const off = at(r, 'off', top)?.ttftP99;
  return mine == null || off == null || off <= 0 ? null : mine / off;
}

function figures(o: Outcome): Figure[] {
  const share = perRound(o, (r) => goodputShare(o, r));
  const ratio = (p: Policy) => perRound(o, (r) => p99Ratio(o, r, p));
  const within = (xs: number[], ok: (x: number) => boolean) =>
    verdict(xs.length === 0 ? null : ok(xs.reduce((a, b) => a + b) / xs.length));
  const top = Math.max(...o.loads);
  return [
    figureOver(
      12,
      'real llama.cpp: objective goodput / best policy, lowest over loads',
      share,
      '≥ 0.9',
      '×',
      within(share, (x) => x >= 0.9),
    ),
    ...(['static', 'objective'] as const).map((p) =>
      figureOver(
        12,
        `real llama.cpp: admitted TTFT p99 at ${top}×, ${p} / off`,
        ratio(p),
        '≤ 0.33',
        '×',
        within(ratio(p), (x) => x <= 1 / 3),
      ),
    ),
  ];
}

const fmt = (x: number | null | undefined, d = 1): string =>
  x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(d);

/** Median and spread over rounds of one quantity of one point. */
function spread(
  o: Outcome,
  policy: Policy,
  load: number,
  f: (p: PointResult) => number | null,
  d = 1,
): string {
  const xs = o.rounds
    .map((r) => at(r, policy, load))
    .filter((p) => p !== undefined)
    .map((p) => f(p))
    .filter((x): x is number => x !== null);
  if (xs.length === 0) return '–';
  const s = [...xs].sort((a, b) => a - b);
  const mid = s[Math.floor((s.length - 1) / 2)];
  return s.length === 1
    ? fmt(mid, d)
    : `${fmt(mid, d)} (${fmt(s[0], d)}–${fmt(s[s.length - 1], d)})`;
}

function pointRow(name: string, p: PointResult): string {
  return `| ${name} | ${fmt(p.goodput, 2)} | ${fmt(p.refused / Math.max(1, p.arrivals), 2)} | ${fmt(p.ttftP50, 0)} | ${fmt(p.ttftP99, 0)} | ${fmt(p.slotsBusy)} | ${p.deferredMax} |`;
}

function details(o: Outcome): string {
  const head =
    '| policy | goodput (req/s) | refused | TTFT p50 (ms) | TTFT p99 (ms) | slots busy (of 4) | deferred max |';
  const rule = '| --- | --- | --- | --- | --- | --- | --- |';
  const lines = [
    `Debian's \`llama-server\` (llama.cpp 0.7.0, \`-np 4 -c 8192 -t 1\`, the random-weight \`micro\` model of ` +
      `\`npm run engines:setup\`) behind three frontends, one per policy (each its own TTFT model), with the in-process bridge (\`--engine-target llamacpp=…\`). ` +
      `Each request: a ${o.shape.promptWords}-word prompt, ${o.shape.maxTokens} tokens streamed (\`ignore_eos\`). ` +
      `Capacity: completions/s of 8 closed-loop clients without shedding, **${fmt(o.capacity, 2)} req/s**; ` +
      `alone a request's first token came after ${fmt(o.alone.ttftMs, 0)} ms and its answer after ${fmt(o.alone.totalMs, 0)} ms. ` +
      `Objective: 3 × that first token + a quarter of that answer = **${o.objectiveMs} ms**. ` +
      `Poisson arrivals at each multiple of capacity, the same for every policy; each policy's points ` +
      `interleaved with the others' in ${o.rounds.length} round(s) (medians, spread over rounds in brackets). ` +
      `Goodput: requests a second, counted by arrival in the window, whose first token met the objective. Admitted TTFT: ` +
      `a request still without a first token when the point's drain time ran out counts with the time it had waited.`,
    '',
    `Policies: ${POLICIES.map((p) => `**${p}** \`${policyFlags(p)}\``).join('; ')}.`,
    '',
  ];
  for (const load of o.loads) {
    lines.push(
      `**${load}× capacity** (${fmt(load * o.capacity, 2)} req/s offered)`,
      '',
      head,
      rule,
    );
    for (const p of POLICIES) {
      lines.push(
        `| ${p} | ${spread(o, p, load, (x) => x.goodput, 2)} | ${spread(o, p, load, (x) => x.refused / Math.max(1, x.arrivals), 2)} | ` +
          `${spread(o, p, load, (x) => x.ttftP50, 0)} | ${spread(o, p, load, (x) => x.ttftP99, 0)} | ${spread(o, p, load, (x) => x.slotsBusy)} | ${spread(o, p, load, (x) => x.deferredMax, 0)} |`,
      );
    }
    lines.push('');
  }
  if (o.settings.size > 0) {
    lines.push(
      "**Settings at 4× capacity** (one point each, before the rounds, in this order on the static policy's frontend): which thresholds keep the 4 slots busy and the wait short.",
      '',
      head,
      rule,
    );
    for (const [name, p] of o.settings)
      lines.push(pointRow(`${name} (\`${policyFlags(name as Policy)}\`)`, p));
    lines.push('');
  }
  lines.push('"refused" is the share of arrivals refused.');
  return lines.join('\n');
}

function analysis(o: Outcome, figs: Figure[]): string[] {
  return figs
    .filter((f) => f.verdict === 'MISS')
    .map(
      (f) =>
        `Scenario 12, ${f.name}: ${fmt(f.median, 2)} against ${f.target}; see the scenario's tables for the slots busy and the queue in the engine at each point${o.quick ? ' (quick run: one round of short points)' : ''}.`,
    );
}

export function report(o: Outcome): ScenarioResult {
  const figs = figures(o);
  return { figures: figs, details: details(o), analysis: analysis(o, figs), plots: plots(o) };
}
