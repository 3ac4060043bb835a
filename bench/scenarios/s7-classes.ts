import { Figure } from '../lib/context';
import { barChart } from '../lib/svg';
import { fmt, median, pct } from '../lib/util';
import type { Row } from './s7-rounds';
import { CLASS_LOAD, CLASS_RUNS, ClassPoint, ClassRun } from './s7-types';

const rejected = (ps: ClassPoint[], run: ClassRun, cls: string): number[] =>
  ps.filter((p) => p.run === run).map((p) => p.classes[cls]?.rejection_ratio ?? NaN);
const m = (xs: number[]): number => median(xs) ?? NaN;

/** The two-class runs' figures (#13): critical protected with classes on, both alike with them off. */
export function classFigures(ps: ClassPoint[], row: Row): Figure[] {
  if (ps.length === 0) return [];
  const crit = (run: ClassRun): number[] => rejected(ps, run, 'critical').map((x) => 100 * x);
  const ratio = (run: ClassRun): number[] =>
    ps.filter((p) => p.run === run).map((p) => p.goodput_rps / p.capacity);
  // Percentage points between the classes' rejection rates with the header ignored.
  const shed = rejected(ps, 'half-no-classes', 'sheddable');
  const off = rejected(ps, 'half-no-classes', 'critical').map((x, i) => 100 * (x - shed[i]));
  // A classes-on run: critical under 1 % rejected while the total goodput holds.
  const protectedRows = (title: string, run: ClassRun): Figure[] => [
    row(
      `${title}, classes on: critical requests rejected`,
      crit(run),
      '< 1 %',
      '%',
      m(crit(run)) < 1,
    ),
    row(
      `${title}, classes on: goodput ÷ capacity`,
      ratio(run),
      '≥ 0.90',
      '×',
      m(ratio(run)) >= 0.9,
    ),
  ];
  const half = `Two classes at ${CLASS_LOAD}× (half critical, half sheddable)`;
  const fifth = `Two classes at ${CLASS_LOAD}× (a fifth critical: critical alone 0.8× capacity)`;
  return [
    ...protectedRows(half, 'half'),
    row(
      `${half}, classes off: critical minus sheddable share rejected`,
      off,
      'within ±5 points (rejected alike)',
      'points',
      Math.abs(m(off)) <= 5,
    ),
    ...protectedRows(fifth, 'fifth'),
  ];
}

const RUN_NAMES: Record<ClassRun, string> = {
  half: 'half critical, classes on',
  'half-no-classes': 'half critical, classes off (`--priority-header none`)',
  fifth: 'a fifth critical, classes on',
};

export function classDetails(ps: ClassPoint[]): string {
  if (ps.length === 0) return '';
  const rows = (Object.keys(CLASS_RUNS) as ClassRun[]).map((run) => {
    const mine = ps.filter((p) => p.run === run);
    const med = (f: (p: ClassPoint) => number): string => fmt(median(mine.map(f)), 1);
    const share = (f: (p: ClassPoint) => number | undefined): string =>
      pct(median(mine.map((p) => f(p) ?? NaN)) ?? NaN, 1);
    return (
      `| ${RUN_NAMES[run]} | ${fmt(median(mine.map((p) => p.rate)))} | ` +
      `${med((p) => p.goodput_rps)} | ${med((p) => p.goodput_rps / p.capacity).slice(0, 4)} | ` +
      `${share((p) => p.classes.critical?.rejection_ratio)} | ${share((p) => p.classes.sheddable?.rejection_ratio)} | ` +
      `${med((p) => p.classes.critical?.goodput_rps ?? NaN)} | ${med((p) => p.classes.sheddable?.goodput_rps ?? NaN)} |`
    );
  });
  return [
    `*Two classes*: at ${CLASS_LOAD}× the round's capacity, every arrival carries \`x-sluice-priority\``,
    '(`critical` or `sheddable`, by a fixed interleaving), sent to the static-thresholds frontend of',
    'record (classes on: sheddable judged at 0.8× the thresholds, critical at 1.2×, the defaults).',
    'Half critical and half sheddable, and the same to that configuration with `--priority-header none`',
    '(classes off: everyone `standard`); and a fifth critical, four fifths sheddable, so critical',
    'traffic alone is 0.8× capacity and classes should serve all of it. Interleaved with the points',
    'above (order rotated each round), medians over the rounds; goodput here is by arrival',
    '(succeeded), whatever the TTFT.',
    '',
    '| run | offered req/s | goodput req/s | ÷ capacity | critical rejected | sheddable rejected | critical goodput req/s | sheddable goodput req/s |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

export function classPlots(ps: ClassPoint[]): Array<{ name: string; svg: string; alt: string }> {
  if (ps.length === 0) return [];
  const runs = Object.keys(CLASS_RUNS) as ClassRun[];
  const rejectedPct = (run: ClassRun, cls: string): number =>
    100 * (median(rejected(ps, run, cls)) ?? NaN);
  const svg = barChart({
    title: `Rejected at ${CLASS_LOAD}× capacity, per priority class`,
    yLabel: 'requests rejected (%)',
    groups: ['½ critical, classes on', '½ critical, classes off', '⅕ critical, classes on'],
    bars: [
      { name: 'critical', color: '#1f77b4', values: runs.map((r) => rejectedPct(r, 'critical')) },
      { name: 'sheddable', color: '#ff7f0e', values: runs.map((r) => rejectedPct(r, 'sheddable')) },
    ],
  });
  return [
    {
      name: 'priority-classes',
      svg,
      alt: 'Share of requests rejected per class: half critical with classes on and off, a fifth critical with classes on',
    },
  ];
}
