/** Scenario 12's plots: goodput and admitted TTFT p99 against offered load, per policy. */
import { ScenarioResult } from '../lib/context';
import { lineChart, Series } from '../lib/svg';
import { PointResult } from './s12-real-engine-load';
import { POLICIES, Policy } from './s12-real-engine-policies';
import type { Outcome, Round } from './s12-real-engine-report';

/** A point of a round: `policy` at `load` times capacity. */
export const at = (r: Round, policy: Policy, load: number): PointResult | undefined =>
  r.results.get(`${policy}@${load}`);

const COLORS: Record<(typeof POLICIES)[number], string> = {
  off: '#999999',
  static: '#1f77b4',
  objective: '#d62728',
};

export function plots(o: Outcome): ScenarioResult['plots'] {
  const median = (p: Policy, load: number, f: (x: PointResult) => number | null): number => {
    const xs = o.rounds
      .map((r) => at(r, p, load))
      .map((x) => (x ? f(x) : null))
      .filter((x): x is number => x !== null)
      .sort((a, b) => a - b);
    return xs.length ? xs[Math.floor((xs.length - 1) / 2)] : NaN;
  };
  const series = (f: (x: PointResult) => number | null): Series[] =>
    POLICIES.map((p) => ({
      name: p,
      color: COLORS[p],
      points: o.loads.map((l): [number, number] => [l, median(p, l, f)]),
    }));
  const plot = (
    name: string,
    what: string,
    yLabel: string,
    f: (x: PointResult) => number | null,
    ref: { y: number; label: string },
    logY = false,
  ) => ({
    name: `s12-real-engine-${name}`,
    alt: `Real llama.cpp server: ${what} against offered load, per policy`,
    svg: lineChart({
      title: `llama.cpp: ${what}`,
      xLabel: 'offered load (× capacity)',
      yLabel,
      series: series(f),
      refs: [{ ...ref, color: '#2ca02c' }],
      logY,
      xTicks: o.loads,
    }),
  });
  return [
    plot(
      'goodput',
      'goodput within the objective',
      'req/s meeting the objective',
      (x) => x.goodput,
      {
        y: o.capacity,
        label: 'capacity',
      },
    ),
    plot(
      'ttft',
      'admitted TTFT p99 (log scale)',
      'ms',
      (x) => x.ttftP99,
      {
        y: o.objectiveMs,
        label: 'objective',
      },
      true,
    ),
  ];
}
