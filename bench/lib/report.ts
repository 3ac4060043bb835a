import { ProcessInfo } from './processes';
import { MachineInfo } from './procfs';
import { Figure, ScenarioResult, Target, verdict } from './scenario';
import { fmt, median } from './util';

export interface RunInfo {
  command: string;
  /** The code measured: `git describe --always --dirty` when the run began. */
  code: string;
  startedAt: Date;
  runtimeS: number;
  machine: MachineInfo;
  quick: boolean;
  nodeFlags: readonly string[];
  foreign: { mean: number; max: number };
}

export interface ScenarioOutcome {
  id: string;
  title: string;
  result: ScenarioResult | null;
  error: string | null;
  runtimeS: number;
  plannedS: number;
  foreign: { mean: number; max: number };
}

const value = (f: Figure, x: number): string => (f.unit === '×' ? x.toFixed(2) : fmt(x));
const unit = (f: Figure): string => (f.unit === '×' ? '×' : ` ${f.unit}`);
function target(t: Target | undefined, f: Figure): string {
  if (!t) return '–';
  if (t.op === 'within') return `${value(f, t.value)} – ${value(f, t.upper)}${unit(f)}`;
  return `${t.op} ${value(f, t.value)}${unit(f)}`;
}

function row(scenario: string, f: Figure): string {
  const xs = f.rounds;
  const spread = xs.length ? `${value(f, Math.min(...xs))} – ${value(f, Math.max(...xs))}` : '–';
  const med = xs.length ? `${value(f, median(xs))}${unit(f)}` : '–';
  const v = verdict(f);
  return `| ${scenario} | ${f.name} | ${target(f.target, f)} | ${med} | ${spread} | ${xs.length} | ${v === 'missed' ? '**missed**' : (v ?? '')} |`;
}

const HEAD = [
  '| scenario | figure | target | median | min – max | rounds | verdict |',
  '| --- | --- | --- | ---: | ---: | ---: | --- |',
];

function processRows(outcomes: ScenarioOutcome[]): string[] {
  const cell = (s: string): string => (s ? `\`${s}\`` : 'none');
  return outcomes.flatMap((o) =>
    (o.result?.processes ?? []).map(
      (p: ProcessInfo) =>
        `| ${o.id} | ${p.role} | ${p.program} | ${p.isNode ? cell(p.nodeFlags) : '(not Node)'} | ${p.isNode ? cell(p.nodeOptions) : '–'} | ${p.cpus} |`,
    ),
  );
}

const METHOD = [
  'Each scenario runs its subjects in rounds, interleaved, the order rotated every round, after',
  'the same warm-up for each; a figure is its median over the rounds with the spread (min – max).',
  'A target is **met** when every round meets it (the spread’s worse end), **missed** when no',
  'round does, and **straddles** otherwise: a straddling figure is reported as it is and not',
  'chased. Servers under test run on CPU 0, load generators and the bench on CPU 1 (`taskset`)',
  'unless a scenario says otherwise; every Node server runs on the same Node binary with the same',
  'flags, and every side of a comparison is loaded by the same client. The table of processes',
  "below is read from each one's `/proc` while it ran; a scenario refuses to report a comparison",
  'whose sides differ in CPUs, Node binary, Node flags or `NODE_OPTIONS`.',
];

export function renderReport(run: RunInfo, outcomes: ScenarioOutcome[]): string {
  const m = run.machine;
  const all = outcomes.flatMap((o) => (o.result?.figures ?? []).map((f) => ({ id: o.id, f })));
  const failed = outcomes.filter((o) => o.error);
  const lines = [
    '# Benchmarks',
    '',
    '<!-- Written by `npm run bench` (bench/main.ts). Do not edit: run it again. -->',
    '',
    `- **Command:** \`${run.command}\`${run.quick ? ' (quick: shorter rounds, not figures of record)' : ''}`,
    `- **Code:** ${run.code}`,
    `- **Date:** ${run.startedAt.toISOString()}; the run took ${fmt(run.runtimeS / 60, 1)} min`,
    `- **Machine:** ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, Linux ${m.kernel}, Node ${m.node}`,
    `- **Node flags of every server started:** ${run.nodeFlags.length ? `\`${run.nodeFlags.join(' ')}\`` : "none (Node's defaults)"}`,
    `- **Other load on the machine** (CPU used outside the bench's processes, sampled each second): ` +
      `mean ${run.foreign.mean.toFixed(2)} cores, peak ${run.foreign.max.toFixed(2)} cores`,
    '',
    '## Method',
    '',
    ...METHOD,
    '',
    '## Targets',
    '',
    ...HEAD,
    ...all.filter((x) => x.f.target).map((x) => row(x.id, x.f)),
    ...failed.map((o) => `| ${o.id} | **did not complete** | | | | | **failed** |`),
    '',
    '## Other figures',
    '',
    ...HEAD,
    ...all.filter((x) => !x.f.target).map((x) => row(x.id, x.f)),
    '',
    '## Processes compared',
    '',
    '| scenario | process | program | Node flags | `NODE_OPTIONS` | CPUs |',
    '| --- | --- | --- | --- | --- | --- |',
    ...processRows(outcomes),
    '',
    '## Scenarios',
    '',
  ];
  for (const o of outcomes) {
    lines.push(
      `### ${o.title} (\`${o.id}\`)`,
      '',
      `*Ran ${fmt(o.runtimeS, 0)} s (planned ${fmt(o.plannedS, 0)} s); other load meanwhile: mean ${o.foreign.mean.toFixed(2)} cores, peak ${o.foreign.max.toFixed(2)}.*`,
      '',
    );
    if (o.result) lines.push(o.result.details, '');
    for (const p of o.result?.plots ?? []) lines.push(`![${p.alt}](bench/${p.name}.svg)`, '');
    if (o.error) lines.push('```', o.error, '```', '');
  }
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
