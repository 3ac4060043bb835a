import { lineChart } from '../lib/svg';
import { maxOf, median } from '../lib/util';
import { Point, POLICIES, Policy, POLICY_NAMES, RunInfo } from './s7-types';

const COLORS: Record<Policy, string> = { off: '#d62728', static: '#1f77b4', slo: '#2ca02c' };

/** Median over the rounds of a value at each load (x: the load as a multiple of capacity). */
function series(
  points: Point[],
  policy: Policy,
  value: (p: Point) => number | null,
): Array<[number, number]> {
  const loads = [...new Set(points.map((p) => p.load))].sort((a, b) => a - b);
  return loads.flatMap((load) => {
    const ps = points.filter((p) => p.load === load && p.policy === policy);
    const v = median(ps.map(value).filter((x): x is number => x !== null && Number.isFinite(x)));
    return v === null ? [] : [[load, v] as [number, number]];
  });
}

/** Scenario 7's two line plots: goodput, and TTFT p50 / p99, against offered load per policy. */
export function goodputPlots(
  points: Point[],
  run: RunInfo,
): Array<{ name: string; svg: string; alt: string }> {
  const xTicks = [...new Set(points.map((p) => p.load))].sort((a, b) => a - b);
  const xLabel = `offered load (× capacity ${Math.round(run.capacity)} req/s, open loop)`;
  const best = maxOf(
    POLICIES.flatMap((p) => series(points, p, (x) => x.goodput_slo_rps)).map(([, y]) => y),
  );
  const goodput = lineChart({
    title: `Goodput (first token within ${run.objectiveMs} ms) vs offered load`,
    xLabel,
    yLabel: 'requests/s meeting the objective',
    xTicks,
    series: POLICIES.map((p) => ({
      name: POLICY_NAMES[p],
      color: COLORS[p],
      points: series(points, p, (x) => x.goodput_slo_rps),
      dashed: p === 'off',
    })),
    refs: [
      { y: run.capacity, label: `capacity ${Math.round(run.capacity)} req/s`, color: '#555' },
      ...(best === null
        ? []
        : [{ y: 0.9 * best, label: 'target: 90 % of the best', color: '#2ca02c' }]),
    ],
  });
  const ttft = lineChart({
    title: 'Time to first token of admitted requests vs offered load',
    xLabel,
    yLabel: 'TTFT (ms, log scale)',
    xTicks,
    logY: true,
    height: 480,
    series: POLICIES.flatMap((p) => [
      {
        name: `${POLICY_NAMES[p]}: p99`,
        color: COLORS[p],
        points: series(points, p, (x) => x.ttft_p99_ms),
      },
      {
        name: `${POLICY_NAMES[p]}: p50`,
        color: COLORS[p],
        points: series(points, p, (x) => x.ttft_p50_ms),
        dashed: true,
      },
    ]),
    refs: [{ y: run.objectiveMs, label: `objective ${run.objectiveMs} ms`, color: '#555' }],
  });
  return [
    {
      name: 'goodput',
      svg: goodput,
      alt: 'Goodput within the TTFT objective vs offered load: off, static thresholds, TTFT objective',
    },
    {
      name: 'ttft',
      svg: ttft,
      alt: 'TTFT p50 and p99 of admitted requests vs offered load: off, static thresholds, TTFT objective',
    },
  ];
}
