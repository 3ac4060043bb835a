import { autocannon, expectOnly } from '../lib/autocannon';
import { Heartbeat, ReportBus } from '../lib/bus';
import {
  BenchContext,
  CPU,
  Figure,
  Scenario,
  ScenarioResult,
  warmupS,
  figureOver,
} from '../lib/context';
import { chatBody, httpPost, isOverload } from '../lib/http';
import { ProcessGroup } from '@sluice/testkit';
import { CpuMeter } from '../lib/procfs';
import { ownRuntime, Runtime } from '../lib/runtimes';
import { Beside, latencyBeside, reactionBeside, stallBeside } from './s10-beside';
import { DECODE_SHEDDING, startFrontend, startWorker } from '../lib/sluice';
import { fmt, freePort, median, rotate, uniqueNamespace, waitFor } from '../lib/util';

const PATH = '/v1/chat/completions';

type Kind = 'Sluice 503' | 'Fastify 503' | 'Sluice 200';
type Side = 'record' | 'other';

interface Subject {
  kind: Kind;
  side: Side;
  url: string;
  pid: number;
  rps: number[];
  /** CPU time per answer (µs), from /proc. */
  cpuUs: number[];
}

/**
 * Scenario 10: what the runtime changes. Sluice and the bare Fastify app run on the runtime of
 * record (the bench's own Node) and on a second Node at once, and are measured in interleaved
 * rounds with the order rotated, because runs made minutes apart moved the references more than
 * any runtime effect. The load generator and the worker behind the admitted path stay on the
 * runtime of record, so only the server under test changes.
 */
export const runtimeScenario: Scenario = {
  id: 10,
  title: 'Runtime',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const other = ctx.compareNode;
    if (!other) {
      return {
        figures: [],
        details: 'Skipped: no second Node to compare with (`--compare-node PATH`).',
        analysis: [],
      };
    }
    const g = ctx.group();
    const ns = uniqueNamespace('s10');
    const bus = await ReportBus.connect(ctx.natsUrl, `${ns}r`);
    const hb = new Heartbeat(bus);
    try {
      const { subjects, workerUrl } = await startSubjects(ctx, g, ns, hb, other);
      const body = chatBody();
      const rounds = ctx.quick ? 2 : 5;
      const seconds = ctx.quick ? 1.5 : 5;
      ctx.log(
        `${ownRuntime().version} vs ${other.version}: warm-up, then ${rounds} interleaved rounds of ${seconds} s per server`,
      );
      for (const s of subjects) {
        const warm = warmupS(ctx.quick, s.kind.startsWith('Sluice') ? 'sluice' : 'fastify');
        await autocannon(g, { url: `${s.url}${PATH}`, body, durationS: warm });
      }
      for (let r = 0; r < rounds; r++) {
        const line: string[] = [];
        for (const s of rotate(subjects, r)) {
          const meter = new CpuMeter(s.pid);
          const res = await autocannon(g, { url: `${s.url}${PATH}`, body, durationS: seconds });
          expectOnly(res, s.kind.slice(-3), label(s, other));
          s.rps.push(res.rps);
          s.cpuUs.push((meter.usedMs() * 1000) / res.total);
          line.push(`${label(s, other)} ${fmt(res.rps)}`);
        }
        ctx.log(`round ${r + 1}/${rounds}: ${line.join(', ')} req/s`);
      }
      const admitted = (side: Side): Subject =>
        subjects.find((s) => s.kind === 'Sluice 200' && s.side === side) as Subject;
      const rate = Math.max(50, Math.round((median(admitted('record').rps) ?? 100) / 2));
      const beside: Beside[] = [
        await latencyBeside(
          ctx,
          g,
          workerUrl,
          [admitted('record').url, admitted('other').url],
          rate,
          other,
        ),
        await reactionBeside(ctx, g, other),
        await stallBeside(ctx, g, other),
      ];
      return summarize(subjects, other, beside);
    } finally {
      hb.stop();
      await bus.close();
      await g.stopAll();
    }
  },
};

/** Each server on each runtime; the rejection frontends see one worker over the threshold. */
async function startSubjects(
  ctx: BenchContext,
  g: ProcessGroup,
  ns: string,
  hb: Heartbeat,
  other: Runtime,
): Promise<{ subjects: Subject[]; workerUrl: string }> {
  // The admitted path's worker: found by both frontends through its reports, on NATS.
  const worker = await startWorker(
    g,
    ['--speedup', '0', '--nats-url', ctx.natsUrl, '--namespace', `${ns}a`],
    {
      cpu: CPU.client,
    },
  );
  hb.set({ worker_id: 'busy-1', endpoint: 'http://127.0.0.1:9', active_decode_blocks: 95 });
  const subjects: Subject[] = [];
  for (const side of ['record', 'other'] as const) {
    const node = side === 'other' ? other.path : undefined;
    for (const [kind, namespace] of [
      ['Sluice 503', `${ns}r`],
      ['Sluice 200', `${ns}a`],
    ] as const) {
      const fe = await startFrontend(g, {
        natsUrl: ctx.natsUrl,
        databaseUrl: ctx.databaseUrl,
        namespace,
        node,
        cpu: CPU.server,
        flags: DECODE_SHEDDING,
        name: `frontend-${side}`,
      });
      subjects.push({ kind, side, url: fe.url, pid: fe.proc.pid, rps: [], cpuUs: [] });
    }
    const port = await freePort();
    const fastify = g.node(
      `bare-fastify-${side}`,
      'dist/bench/servers/bare-fastify.js',
      [String(port)],
      { cpu: CPU.server, node },
    );
    await fastify.waitForOutput(/listening/);
    const url = `http://127.0.0.1:${port}`;
    subjects.push({ kind: 'Fastify 503', side, url, pid: fastify.pid, rps: [], cpuUs: [] });
  }
  const body = chatBody();
  for (const s of subjects) {
    await waitFor(async () => {
      const a = await httpPost(`${s.url}${PATH}`, body);
      return s.kind.endsWith('200') ? a.status === 200 : isOverload(a.status, a.text);
    }, `${s.kind} on the ${s.side} runtime`);
  }
  return { subjects, workerUrl: worker.url };
}

function label(s: Subject, other: Runtime): string {
  return `${s.kind} on ${s.side === 'record' ? ownRuntime().version : other.version}`;
}

function summarize(subjects: Subject[], other: Runtime, beside: Beside[]): ScenarioResult {
  const own = ownRuntime().version;
  const find = (kind: Kind, side: Side): Subject =>
    subjects.find((s) => s.kind === kind && s.side === side) as Subject;
  /** Per round: a over b (both measured in the same round). */
  const per = (a: number[], b: number[]): number[] => a.map((x, i) => x / b[i]);
  const row = (name: string, xs: number[]): Figure =>
    figureOver(10, name, xs, '(measured)', '×', 'n/a');
  const change = (kind: Kind): Figure =>
    row(
      `Runtime: ${kind}s req/s, ${own} / ${other.version}`,
      per(find(kind, 'record').rps, find(kind, 'other').rps),
    );
  const rejection = (side: Side, version: string): Figure =>
    row(
      `Runtime: rejection path Sluice / bare Fastify on ${version}`,
      per(find('Sluice 503', side).rps, find('Fastify 503', side).rps),
    );
  const figures = [
    change('Sluice 503'),
    change('Fastify 503'),
    change('Sluice 200'),
    rejection('record', own),
    rejection('other', other.version),
    ...beside.flatMap((b) => b.figures),
  ];
  const table = subjects
    .map(
      (s) =>
        `| ${s.kind} | ${s.side === 'record' ? own : other.version} | ${s.rps.map((x) => fmt(x)).join(', ')} | ${fmt(median(s.cpuUs), 0)} |`,
    )
    .join('\n');
  const details = [
    `Each server on the runtime of record (${own}) and on ${other.version} (\`${other.path}\`),`,
    'all running at once, pinned to CPU 0; autocannon (50 connections, POST of a chat body, on the',
    'runtime of record) on CPU 1. Sluice 503: the rejection path of scenario 1 (one worker reported',
    'over the threshold); Fastify 503: its bare Fastify app; Sluice 200: the admitted path of',
    'scenario 2, proxying to one simulated worker (`--speedup 0`, on CPU 1, on the runtime of',
    'record). Each warmed up as in scenarios 1 and 2, then rounds interleaved, the order rotated',
    'each round; ratios pair the two runtimes within each round.',
    '',
    '| server | Node | req/s per round | CPU per answer (µs, median) |',
    '| --- | --- | --- | ---: |',
    table,
    ...beside.flatMap((b) => ['', b.details]),
  ].join('\n');
  return { figures, details, analysis: [] };
}
