/** The real-engine scenario's plots: goodput and admitted TTFT p99 against offered load. */
import { Plot } from '../lib/scenario';
import { lineChart, Series } from '../lib/svg';
import { median } from '../lib/util';
import { PointResult } from './real-engine-load';
import { POLICIES } from './real-engine-policies';
import { Point, Run } from './real-engine-report';

const COLORS: Record<(typeof POLICIES)[number], string> = {
  off: '#999999',
  static: '#1f77b4',
  objective: '#d62728',
};

export function plots(points: Point[], run: Run): Plot[] {
  const series = (f: (x: PointResult) => number | null): Series[] =>
    POLICIES.map((policy) => ({
      name: policy,
      color: COLORS[policy],
      points: run.loads.map((load): [number, number] => {
        const xs = points
          .filter((x) => x.policy === policy && x.load === load)
          .map(f)
          .filter((x): x is number => x !== null && Number.isFinite(x));
        return [load, xs.length ? median(xs) : NaN];
      }),
    }));
  const chart = (
    name: string,
    what: string,
    yLabel: string,
    s: Series[],
    ref: [number, string],
    logY = false,
  ): Plot => ({
    name: `real-engine-${name}`,
    alt: `Real llama.cpp server: ${what} against offered load, per policy (median of rounds)`,
    svg: lineChart({
      title: `llama.cpp: ${what}`,
      xLabel: 'offered load (× capacity)',
      yLabel,
      series: s,
      refs: [{ y: ref[0], label: ref[1], color: '#2ca02c' }],
      logY,
      xTicks: run.loads,
    }),
  });
  return [
    chart(
      'goodput',
      'requests/s within the objective',
      'req/s',
      series((x) => x.goodput),
      [run.capacity, 'capacity'],
    ),
    chart(
      'ttft',
      'admitted TTFT p99 (log scale)',
      'ms',
      series((x) => x.ttftP99),
      [run.objectiveMs, 'objective'],
      true,
    ),
  ];
}
