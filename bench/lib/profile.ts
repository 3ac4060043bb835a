import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A time window in µs of the monotonic clock (`process.hrtime`), which V8's profiler shares. */
export interface Window {
  fromUs: number;
  toUs: number;
}

export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

export interface HotSpot {
  name: string;
  where: string;
  selfPct: number;
  /** The caller that accounts for most of this function's self time. */
  calledFrom: string;
}

export interface ProfileSummary {
  functions: HotSpot[];
  owners: Array<{ owner: string; selfPct: number }>;
  /** Sluice's own functions by inclusive time (what they and everything they call cost). */
  sluiceInclusive: Array<{ name: string; where: string; pct: number }>;
  idlePct: number;
}

/** node_modules package, Node internal, or project file that a frame belongs to. */
function ownerOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  if (url.startsWith('node:')) return 'node core';
  const s = /dist\/(libs\/[^/]+|apps\/[^/]+)/.exec(url);
  return s ? `sluice ${s[1]}` : url.replace(/^file:\/\//, '');
}

function shortWhere(url: string, line: number): string {
  if (!url) return '';
  const m = /node_modules\/(.+)$/.exec(url) ?? /dist\/(.+)$/.exec(url);
  return `${m ? m[1] : url.replace(/^file:\/\//, '')}:${line + 1}`;
}

/**
 * Self-time hot spots of the (single) .cpuprofile in `dir`, counting only the samples taken
 * inside `window` (so start-up does not drown the load), idle time excluded from the %.
 */
export function summarizeProfile(dir: string, window?: Window, top = 12): ProfileSummary {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no .cpuprofile written in ${dir}`);
  const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const hits = new Map<number, number>();
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    if (window && (t < window.fromUs || t > window.toUs)) continue;
    hits.set(p.samples[i], (hits.get(p.samples[i]) ?? 0) + 1);
  }
  let total = 0;
  let idle = 0;
  const parent = new Map<number, ProfileNode>();
  for (const node of p.nodes) for (const c of node.children ?? []) parent.set(c, node);
  const frameName = (n: ProfileNode | undefined): string =>
    n
      ? `${n.callFrame.functionName || '(anonymous)'} ${shortWhere(n.callFrame.url, n.callFrame.lineNumber)}`.trim()
      : '';
  const fn = new Map<string, HotSpot & { hits: number; callers: Map<string, number> }>();
  const owners = new Map<string, number>();
  for (const node of p.nodes) {
    const h = hits.get(node.id) ?? 0;
    if (h === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    total += h;
    if (functionName === '(idle)') {
      idle += h;
      continue;
    }
    const name = functionName || '(anonymous)';
    const key = `${name}@${url}:${lineNumber}`;
    const e = fn.get(key) ?? {
      name,
      where: shortWhere(url, lineNumber),
      selfPct: 0,
      hits: 0,
      calledFrom: '',
      callers: new Map(),
    };
    e.hits += h;
    const caller = frameName(parent.get(node.id));
    e.callers.set(caller, (e.callers.get(caller) ?? 0) + h);
    fn.set(key, e);
    const o = ownerOf(url, name);
    owners.set(o, (owners.get(o) ?? 0) + h);
  }
  const busy = Math.max(1, total - idle);
  // Inclusive time of Sluice's own frames: each sample credits every distinct such frame on
  // its stack once.
  const inclusive = new Map<string, { name: string; where: string; hits: number }>();
  for (const node of p.nodes) {
    const h = hits.get(node.id) ?? 0;
    if (h === 0 || node.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    for (let n: ProfileNode | undefined = node; n; n = parent.get(n.id)) {
      const { functionName, url, lineNumber } = n.callFrame;
      if (!/\/dist\/(libs|apps)\//.test(url)) continue;
      const key = `${functionName}@${url}:${lineNumber}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const e = inclusive.get(key) ?? {
        name: functionName || '(anonymous)',
        where: shortWhere(url, lineNumber),
        hits: 0,
      };
      e.hits += h;
      inclusive.set(key, e);
    }
  }
  return {
    sluiceInclusive: [...inclusive.values()]
      .sort((a, b) => b.hits - a.hits)
      .slice(0, top)
      .map((e) => ({ name: e.name, where: e.where, pct: (100 * e.hits) / busy })),
    idlePct: total ? (100 * idle) / total : 0,
    functions: [...fn.values()]
      .sort((a, b) => b.hits - a.hits)
      .slice(0, top)
      .map((e) => ({
        name: e.name,
        where: e.where,
        selfPct: (100 * e.hits) / busy,
        calledFrom: [...e.callers.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '',
      })),
    owners: [...owners.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([owner, h]) => ({ owner, selfPct: (100 * h) / busy })),
  };
}

export function profileMarkdown(title: string, s: ProfileSummary): string {
  const fns = s.functions
    .map((f) => `| ${f.selfPct.toFixed(1)} % | \`${f.name}\` | ${f.where} | ${f.calledFrom} |`)
    .join('\n');
  const own = s.owners.map((o) => `${o.owner} ${o.selfPct.toFixed(1)} %`).join(', ');
  return [
    `**CPU profile — ${title}** (self time, % of non-idle samples; idle ${s.idlePct.toFixed(0)} %)`,
    '',
    `By owner: ${own}.`,
    '',
    '| self | function | where | mostly called from |',
    '| ---: | --- | --- | --- |',
    fns,
    '',
    "Sluice's own functions by inclusive time (the function and everything it calls):",
    '',
    '| inclusive | function | where |',
    '| ---: | --- | --- |',
    ...s.sluiceInclusive.map((f) => `| ${f.pct.toFixed(1)} % | \`${f.name}\` | ${f.where} |`),
    '',
  ].join('\n');
}
