import { BenchContext, CPU, Figure, Scenario, ScenarioResult, verdict } from '../lib/context';
import { fmt, maxOf, median, minOf } from '../lib/util';

interface Series {
  workers: number;
  outcome: 'admit' | 'reject';
  ns: number[];
}

interface Diagnostics {
  guardRejectNs: number[];
  newErrorNs: number[];
  throwCatchNs: number[];
}

/** How much flatter than this the cost must stay from 10 to 10,000 workers to count as flat. */
const FLAT = 1.25;

/** Scenario 3: ns per admission decision with the real decision service and registry, in-process. */
export const decisionScenario: Scenario = {
  id: 3,
  title: 'Admission decision cost',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const g = ctx.group();
    try {
      const [rounds, admitIters, rejectIters] = ctx.quick
        ? [3, 500_000, 500_000]
        : [9, 2_000_000, 2_000_000];
      ctx.log(
        `${rounds} interleaved rounds of ${admitIters} admit and ${rejectIters} reject decisions per size`,
      );
      const proc = g.node(
        'decision-cost',
        'dist/bench/tools/decision-cost.js',
        [String(rounds), String(admitIters), String(rejectIters)],
        { cpu: CPU.server, captureStdout: true },
      );
      const code = await proc.exited;
      if (code !== 0) throw new Error(`decision-cost exited ${code}: ${proc.output.slice(-2000)}`);
      const out = JSON.parse(proc.stdout) as { series: Series[]; diagnostics: Diagnostics };
      return summarize(out.series, out.diagnostics, rounds, admitIters, rejectIters);
    } finally {
      await g.stopAll();
    }
  },
};

function summarize(
  series: Series[],
  diag: Diagnostics,
  rounds: number,
  admitIters: number,
  rejectIters: number,
): ScenarioResult {
  const figures: Figure[] = [];
  const analysis: string[] = [];
  for (const outcome of ['admit', 'reject'] as const) {
    const mine = series.filter((s) => s.outcome === outcome);
    for (const s of mine) {
      const m = median(s.ns);
      figures.push({
        scenario: 3,
        name: `Admission decision, ${outcome === 'admit' ? 'admitted' : 'rejected'}, ${s.workers.toLocaleString('en-US')} workers`,
        target: '< 1 µs',
        unit: 'ns',
        median: m,
        min: minOf(s.ns),
        max: maxOf(s.ns),
        verdict: verdict(m !== null && m < 1000),
      });
    }
    // Side by side, as in scenarios 1 and 2: the ratio within each round (the sizes of a round
    // run back to back), then the median over rounds. At ~10 ns a call, the machine's state
    // shifts every size of a round together (see the rounds below), which a ratio of
    // medians taken from different rounds would mistake for a dependence on size.
    const ratios = mine[0].ns.map((x, i) => mine[mine.length - 1].ns[i] / x);
    const flat = median(ratios) ?? NaN;
    figures.push({
      scenario: 3,
      name: `Admission decision, ${outcome}: cost at 10,000 / at 10 workers`,
      target: `flat (≤ ${FLAT})`,
      unit: '×',
      median: flat,
      min: minOf(ratios),
      max: maxOf(ratios),
      verdict: verdict(flat <= FLAT),
    });
  }
  const reject = figures.filter((f) => f.name.includes('rejected') && f.verdict === 'MISS');
  if (reject.length) {
    analysis.push(
      `**Rejection decision (${fmt(reject[0].median, 0)} ns, target < 1 µs).** The decision is the same ` +
        'O(1) map read as on the admit path and returns the refusal as a value; see the per-size table ' +
        'in scenario 3.',
    );
  }
  const admit = figures.filter((f) => f.name.includes('admitted') && f.verdict === 'MISS');
  if (admit.length) {
    analysis.push(
      `**Admit decision (${fmt(admit[0].median, 0)} ns, target < 1 µs).** See the per-size table in scenario 3.`,
    );
  }
  const rows = series
    .map(
      (s) =>
        `| ${s.workers.toLocaleString('en-US')} | ${s.outcome} | ${fmt(median(s.ns), 0)} | ${s.ns.map((x) => x.toFixed(0)).join(', ')} |`,
    )
    .join('\n');
  const details = [
    'The real `AdmissionDecision`, `WorkerRegistry`, `ThresholdsService` and `FrontendConfig`',
    '(`token-capacity`, decode threshold 0.85) instantiated in a separate Node process pinned to',
    'CPU 0; the registry is filled through `applyReport` with parsed contract reports. Timed is',
    '`AdmissionDecision.decide(body)` on a parsed chat body: the call the request path makes, in the',
    "early 503 hook (a Fastify `preHandler` on the OpenAI POST routes) for every request and in Nest's",
    'admission guard again for admitted ones. *Admitted*: one worker of the model is free, `decide`',
    'returns null. *Rejected*: every worker is busy and `decide` returns the overload refusal (a value;',
    'nothing is thrown). Not included: counting the rejection and sending the pre-encoded 503, which',
    `scenario 1 measures end to end. Each sample: ${admitIters.toLocaleString('en-US')} admit /`,
    `${rejectIters.toLocaleString('en-US')} reject calls timed with \`process.hrtime.bigint()\`, ${rounds} rounds with the sizes interleaved.`,
    `"Flat" is read as: in the median round, the cost at 10,000 workers is within ${FLAT}× of the cost at 10.`,
    '',
    '| workers | outcome | median ns | every round (ns) |',
    '| ---: | --- | ---: | --- |',
    rows,
    '',
    `Diagnostics (10,000 workers): the admission guard's own refusal, which signals by throwing ` +
      `\`ServiceOverloadedError\` (stack capture off) and is used only where the early hook is not ` +
      `installed, ${fmt(median(diag.guardRejectNs), 0)} ns; \`new ServiceOverloadedError()\` with its stack ` +
      `trace ${fmt(median(diag.newErrorNs), 0)} ns; throw + catch of a preallocated error ` +
      `${fmt(median(diag.throwCatchNs), 0)} ns.`,
  ].join('\n');
  return { figures, details, analysis };
}
