import { median } from '../lib/util';
import { lineChart } from '../lib/svg';
import type { Mode, Point } from './s7-goodput';

const COLORS: Record<Mode, string> = { on: '#1f77b4', off: '#d62728' };

function series(
  points: Point[],
  mode: Mode,
  value: (p: Point) => number | null,
): Array<[number, number]> {
  const loads = [...new Set(points.map((p) => p.load))].sort((a, b) => a - b);
  return loads.flatMap((load) => {
    const ps = points.filter((p) => p.load === load && p.mode === mode);
    const v = median(ps.map(value).filter((x): x is number => x !== null && Number.isFinite(x)));
    return v === null ? [] : [[median(ps.map((p) => p.rate)) ?? 0, v] as [number, number]];
  });
}

/** The two plots of scenario 7: goodput and p99 TTFT against offered load, on and off. */
export function goodputPlots(
  capacity: number,
  points: Point[],
  shedding: string,
): Array<{ name: string; svg: string; alt: string }> {
  const names: Record<Mode, string> = {
    on: `shedding on (${shedding.replace(/--active-|-threshold/g, '').replace(/\s+/g, ' ')})`,
    off: 'shedding off',
  };
  const xTicks = [...new Set(points.map((p) => p.rate))].sort((a, b) => a - b);
  const goodput = lineChart({
    title: 'Goodput vs offered load (2 simulated workers)',
    xLabel: 'offered load (requests/s, open loop)',
    yLabel: 'successful requests/s',
    xTicks,
    series: (['on', 'off'] as Mode[]).map((m) => ({
      name: names[m],
      color: COLORS[m],
      points: series(points, m, (p) => p.goodput_rps),
      dashed: m === 'off',
    })),
    refs: [
      { y: capacity, label: `capacity ${Math.round(capacity)} req/s`, color: '#555' },
      { y: 0.9 * capacity, label: 'target: 90 % of capacity', color: '#2ca02c' },
    ],
  });
  const ttft = lineChart({
    title: 'p99 time to first token vs offered load',
    xLabel: 'offered load (requests/s, open loop)',
    yLabel: 'p99 TTFT of admitted requests (ms, log scale)',
    xTicks,
    logY: true,
    series: (['on', 'off'] as Mode[]).map((m) => ({
      name: names[m],
      color: COLORS[m],
      points: series(points, m, (p) => p.ttft_p99_ms),
      dashed: m === 'off',
    })),
  });
  return [
    { name: 'goodput', svg: goodput, alt: 'Goodput vs offered load, shedding on and off' },
    {
      name: 'ttft-p99',
      svg: ttft,
      alt: 'p99 time to first token vs offered load, shedding on and off',
    },
  ];
}
