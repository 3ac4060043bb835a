import { Figure, ScenarioResult, verdict, figureOver } from '../lib/context';
import { median } from '../lib/util';
import { classFigures, classPlots } from './s7-classes';
import { details } from './s7-details';
import { analysis } from './s7-analysis';
import { finite, ofKind, wrongRefusals } from './s7-measures';
import { goodputPlots } from './s7-plots';
import { Row, Rounds } from './s7-rounds';
import { Point, Policy, RunInfo, SampleKind, SamplePoint, ClassPoint } from './s7-types';

const med = (xs: number[]): number => median(xs) ?? NaN;

export function summarize(
  points: Point[],
  samples: SamplePoint[],
  classPoints: ClassPoint[],
  run: RunInfo,
): ScenarioResult {
  const row: Row = (name, xs, target, unit, ok) => ({
    // A --quick point is shorter than the cold-start transient: no verdict on it.
    ...figureOver(7, name, xs, target, unit, run.quick ? 'n/a' : verdict(ok)),
    note:
      run.quick && ok !== null
        ? 'no verdict in --quick: points shorter than the start-up transient'
        : undefined,
  });
  const R = new Rounds(points, run);
  const sloBest = R.goodputOfBest('slo');
  const sloMet = R.metShare('slo');
  const staticCap = R.ofCapacity('static');
  const wrong = wrongRefusals(ofKind(samples, 'record'));
  const tightWrong = wrongRefusals(ofKind(samples, 'tight'));
  const metAt = (kind: SampleKind): number[] =>
    finite(ofKind(samples, kind).map((s) => (s.admitted_met_share ?? NaN) * 100));
  // Per round: goodput within the tighter objective, the enforcing objective ÷ the static thresholds.
  const enforcedGain = finite(
    ofKind(samples, 'tight-enforced').map((e) => {
      const st = ofKind(samples, 'tight-static').find((x) => x.round === e.round);
      return st && st.goodput_slo_rps > 0 ? e.goodput_slo_rps / st.goodput_slo_rps : NaN;
    }),
  );
  const tight = `${run.tightMultiple}× the unloaded TTFT p50: ${run.tightMs} ms`;
  const objective = `${run.objectiveMs} ms`;
  const figures: Figure[] = [
    row(
      `Goodput at 4×, TTFT objective: req/s meeting the objective (${objective}) ÷ the best any policy reached at any load`,
      sloBest,
      '≥ 0.90',
      '×',
      med(sloBest) >= 0.9,
    ),
    row(
      `Admitted requests meeting the objective at 4×, TTFT objective`,
      sloMet,
      '≥ 99 %',
      '%',
      med(sloMet) >= 99,
    ),
    ...(['static', 'off'] as Policy[]).flatMap((p) => [
      row(
        `Goodput at 4×, ${p === 'off' ? 'off' : 'static thresholds'}: the same ratio`,
        R.goodputOfBest(p),
        '(compare)',
        '×',
        null,
      ),
      row(
        `Admitted requests meeting the objective at 4×, ${p === 'off' ? 'off' : 'static thresholds'}`,
        R.metShare(p),
        '(compare)',
        '%',
        null,
      ),
    ]),
    row(
      `TTFT objective: ${run.objectiveMultiple}× the unloaded TTFT p50 (${run.unloadedN} requests, measured at the start)`,
      [run.objectiveMs],
      '(measured)',
      'ms',
      null,
    ),
    row(
      'Capacity of the two simulated workers (closed-loop streaming probe, one per round)',
      run.capacities,
      '(measured)',
      'req/s',
      null,
    ),
    row(
      'Goodput at 4× capacity, static thresholds: successful req/s ÷ capacity (by arrival)',
      staticCap,
      '≥ 0.90',
      '×',
      med(staticCap) >= 0.9,
    ),
    row(
      'Goodput at 4× capacity, TTFT objective: the same ratio',
      R.ofCapacity('slo'),
      '(compare)',
      '×',
      null,
    ),
    row('Goodput at 4× capacity, off: the same ratio', R.ofCapacity('off'), '(compare)', '×', null),
    row(
      'p99 TTFT of admitted requests, static thresholds: 4× ÷ 0.5× load',
      R.ttftGrowth('static'),
      '≤ 2',
      '×',
      med(R.ttftGrowth('static')) <= 2,
    ),
    row('p99 TTFT, TTFT objective: 4× ÷ 0.5× load', R.ttftGrowth('slo'), '(compare)', '×', null),
    row(
      'p99 TTFT, off: 4× ÷ 0.5× load',
      R.ttftGrowth('off'),
      '≥ 5 (shows the problem)',
      '×',
      med(R.ttftGrowth('off')) >= 5,
    ),
    row(
      `TTFT prediction error (absolute, predicted vs actual) of admitted requests, TTFT objective, every load: p50 (interpolated in the histogram's buckets; ${R.predictionCount()} requests)`,
      R.predictionError(0.5),
      '(measured)',
      'ms',
      null,
    ),
    row('The same, p90', R.predictionError(0.9), '(measured)', 'ms', null),
    {
      ...row(
        `Wrong refusals by the objective at 4×: sampled would-be refusals (${100 * run.sampleShare} % of them admitted) that met it, pooled over the rounds (${wrong.met} of ${wrong.judged}; ${wrong.failed} failed, left out)`,
        wrong.perRound,
        '(measured)',
        '%',
        null,
      ),
      // Pooled over the rounds: each round's sample is small.
      median: wrong.share,
    },
    {
      ...row(
        `Wrong refusals at 4× at a tighter objective (${tight}), where it refuses on its own: would-be refusals (${100 * run.tightSampleShare} % of them admitted) that met it, pooled (${tightWrong.met} of ${tightWrong.judged}; ${tightWrong.failed} failed, left out)`,
        tightWrong.perRound,
        '(measured)',
        '%',
        null,
      ),
      median: tightWrong.share,
    },
    row(
      'Admitted requests meeting the tighter objective at 4×, TTFT objective (its sample included)',
      metAt('tight'),
      '(compare)',
      '%',
      null,
    ),
    row(
      'The same, static thresholds judged by the tighter objective',
      metAt('tight-static'),
      '(compare)',
      '%',
      null,
    ),
    row(
      'The same, the tighter objective enforced (refusing its would-be refusals)',
      metAt('tight-enforced'),
      '(compare)',
      '%',
      null,
    ),
    row(
      'Goodput within the tighter objective at 4×: the objective enforced ÷ the static thresholds',
      enforcedGain,
      '(measured)',
      '×',
      null,
    ),
    ...classFigures(classPoints, row),
  ];
  return {
    figures,
    details: details(R, samples, classPoints),
    analysis: analysis(R, figures),
    plots: [...goodputPlots(points, run), ...classPlots(classPoints)],
  };
}
