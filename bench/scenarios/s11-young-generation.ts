import { YOUNG_GENERATION_FLAG } from '@sluice/cli';
import { autocannon, expectOnly } from '../lib/autocannon';
import { Heartbeat, ReportBus } from '../lib/bus';
import { BenchContext, CPU, Figure, Scenario, ScenarioResult } from '../lib/context';
import { fixedRate } from '../lib/fixed-rate';
import { chatBody, httpPost, isOverload, MODEL } from '../lib/http';
import { CpuMeter } from '../lib/procfs';
import { DECODE_SHEDDING, startFrontend, startWorker } from '../lib/sluice';
import { fmt, maxOf, median, minOf, rotate, uniqueNamespace, waitFor } from '../lib/util';

const PATH = '/v1/chat/completions';
/** A model whose one worker reports over the threshold: every request to it is a 503. */
const BUSY_MODEL = 'busy-model';
type Subject = 'capped' | 'defaults';
const SUBJECTS: Subject[] = ['capped', 'defaults'];
const LABEL: Record<Subject, string> = {
  capped: `\`${YOUNG_GENERATION_FLAG}\` (shipped)`,
  defaults: "V8's defaults",
};

interface Samples {
  rejected: number[];
  admitted: number[];
  /** The frontend's CPU per answer (µs, from /proc) during the max-rate runs. */
  rejectedCpuUs: number[];
  admittedCpuUs: number[];
  p50: number[];
  p99: number[];
}

const noSamples = (): Samples => ({
  rejected: [],
  admitted: [],
  rejectedCpuUs: [],
  admittedCpuUs: [],
  p50: [],
  p99: [],
});

/**
 * Scenario 11: what the young-generation cap the frontend ships with costs on the request
 * paths — two frontends, one with it and one on V8's defaults, in interleaved rounds: the
 * rejection path's and the admitted path's maximum rate, and latency at a fixed rate.
 * (Scenario 8 shows what it saves in memory.)
 */
export const youngGenerationScenario: Scenario = {
  id: 11,
  title: 'Young-generation cap: cost on the request paths',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const g = ctx.group();
    const ns = uniqueNamespace('s11');
    const bus = await ReportBus.connect(ctx.natsUrl, ns);
    const hb = new Heartbeat(bus);
    try {
      hb.set({
        worker_id: 'busy-1',
        model: BUSY_MODEL,
        endpoint: 'http://127.0.0.1:9',
        active_decode_blocks: 95,
      });
      await startWorker(g, ['--speedup', '0', '--nats-url', ctx.natsUrl, '--namespace', ns], {
        cpu: CPU.client,
      });
      const common = { natsUrl: ctx.natsUrl, databaseUrl: ctx.databaseUrl, namespace: ns };
      const urls = {} as Record<Subject, string>;
      const pids = {} as Record<Subject, number>;
      for (const s of SUBJECTS) {
        const fe = await startFrontend(g, {
          ...common,
          cpu: CPU.server,
          flags: DECODE_SHEDDING,
          name: `frontend-${s}`,
          // As shipped, or with none of the shipped Node flags: V8's defaults.
          ...(s === 'defaults' ? { shippedNodeArgs: [] } : {}),
        });
        urls[s] = fe.url;
        pids[s] = fe.proc.pid;
      }
      const rejectBody = chatBody(BUSY_MODEL);
      const admitBody = chatBody(MODEL);
      for (const s of SUBJECTS) {
        await waitFor(
          async () => (await httpPost(`${urls[s]}${PATH}`, admitBody)).status === 200,
          `${s} answering 200`,
        );
        await waitFor(async () => {
          const a = await httpPost(`${urls[s]}${PATH}`, rejectBody);
          return isOverload(a.status, a.text);
        }, `${s} answering the overload 503`);
      }
      const rounds = ctx.quick ? 1 : 5;
      const seconds = ctx.quick ? 1.5 : 5;
      const warmup = ctx.quick ? 2 : 15;
      const rate = ctx.quick ? 500 : 2500;
      ctx.log(`warm-up ${warmup} s per frontend, then ${rounds} interleaved rounds`);
      for (const s of SUBJECTS) {
        await autocannon(g, { url: `${urls[s]}${PATH}`, body: rejectBody, durationS: warmup / 3 });
        await autocannon(g, { url: `${urls[s]}${PATH}`, body: admitBody, durationS: warmup });
      }
      const out: Record<Subject, Samples> = { capped: noSamples(), defaults: noSamples() };
      for (let r = 0; r < rounds; r++) {
        const order = rotate(SUBJECTS, r);
        // Each frontend's maximum rate on a path, in this round's order.
        const maxRate = async (body: string, status: string, into: 'rejected' | 'admitted') => {
          for (const s of order) {
            const meter = new CpuMeter(pids[s]);
            const a = await autocannon(g, { url: `${urls[s]}${PATH}`, body, durationS: seconds });
            expectOnly(a, status, `${s} ${into}`);
            out[s][into].push(a.rps);
            out[s][`${into}CpuUs`].push((meter.usedMs() * 1000) / a.total);
          }
        };
        await maxRate(rejectBody, '503', 'rejected');
        await maxRate(admitBody, '200', 'admitted');
        for (const s of order) {
          const f = await fixedRate(g, `${urls[s]}${PATH}`, rate, seconds, admitBody, 64, 2);
          if (f.errors > 0 || Object.keys(f.statuses).some((k) => k !== '200'))
            throw new Error(
              `${s} at ${rate} req/s: ${JSON.stringify(f.statuses)}, ${f.errors} errors`,
            );
          out[s].p50.push((f.p50_us ?? NaN) / 1000);
          out[s].p99.push((f.p99_us ?? NaN) / 1000);
        }
        ctx.log(
          `round ${r + 1}/${rounds}: ` +
            SUBJECTS.map(
              (s) =>
                `${s} 503 ${fmt(out[s].rejected[r], 0)} req/s, 200 ${fmt(out[s].admitted[r], 0)} req/s, ` +
                `p50/p99 ${fmt(out[s].p50[r], 2)}/${fmt(out[s].p99[r], 1)} ms`,
            ).join('; '),
        );
      }
      return summarize(out, rate, rounds, seconds);
    } finally {
      hb.stop();
      await bus.close();
      await g.stopAll();
    }
  },
};

/** Per round, capped ÷ defaults: the rounds are interleaved, so each ratio shares its minutes. */
function ratios(capped: number[], defaults: number[]): number[] {
  return capped.map((c, i) => c / defaults[i]);
}

function ratioFigure(name: string, xs: number[]): Figure {
  return {
    scenario: 11,
    name,
    target: '(measured)',
    unit: '×',
    median: median(xs),
    min: minOf(xs),
    max: maxOf(xs),
    verdict: 'n/a',
  };
}

function summarize(
  out: Record<Subject, Samples>,
  rate: number,
  rounds: number,
  seconds: number,
): ScenarioResult {
  const { capped, defaults } = out;
  const figures = [
    ratioFigure(
      `Young-generation cap: rejection path req/s, ${YOUNG_GENERATION_FLAG} ÷ V8's defaults`,
      ratios(capped.rejected, defaults.rejected),
    ),
    ratioFigure(
      `Young-generation cap: admitted path req/s, ${YOUNG_GENERATION_FLAG} ÷ V8's defaults`,
      ratios(capped.admitted, defaults.admitted),
    ),
    ratioFigure(
      `Young-generation cap: frontend CPU per 503, ${YOUNG_GENERATION_FLAG} ÷ V8's defaults`,
      ratios(capped.rejectedCpuUs, defaults.rejectedCpuUs),
    ),
    ratioFigure(
      `Young-generation cap: frontend CPU per proxied 200, ${YOUNG_GENERATION_FLAG} ÷ V8's defaults`,
      ratios(capped.admittedCpuUs, defaults.admittedCpuUs),
    ),
    ratioFigure(
      `Young-generation cap: admitted p50 at ${rate} req/s, ${YOUNG_GENERATION_FLAG} ÷ V8's defaults`,
      ratios(capped.p50, defaults.p50),
    ),
    ratioFigure(
      `Young-generation cap: admitted p99 at ${rate} req/s, ${YOUNG_GENERATION_FLAG} ÷ V8's defaults`,
      ratios(capped.p99, defaults.p99),
    ),
  ];
  const row = (s: Subject): string => {
    const o = out[s];
    const m = (xs: number[], d: number): string => fmt(median(xs), d);
    return `| ${LABEL[s]} | ${m(o.rejected, 0)} | ${m(o.rejectedCpuUs, 1)} | ${m(o.admitted, 0)} | ${m(o.admittedCpuUs, 1)} | ${m(o.p50, 2)} | ${m(o.p99, 1)} |`;
  };
  const details = [
    'Two frontends on the same NATS, database and simulated worker (`--speedup 0`), both on CPU 0:',
    `one started as shipped (\`node ${YOUNG_GENERATION_FLAG}\`), one on V8's defaults (on Node 24 its`,
    'young generation grows to 64 MB per semi-space). Each round measures both, in turn (the order',
    `alternates): autocannon for ${seconds} s at 50 connections on the rejection path (a model whose`,
    'only worker is over the threshold) and on the admitted path, then the fixed-rate client for',
    `${seconds} s at ${rate} req/s on the admitted path; the frontend's CPU per answer is read from /proc`,
    `during the max-rate runs. ${rounds} rounds after a warm-up; the figures`,
    "are medians of each round's ratio. Medians over the rounds:",
    '',
    '| frontend | 503s req/s | µs CPU per 503 | 200s req/s | µs CPU per 200 | admitted p50 ms | admitted p99 ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    row('capped'),
    row('defaults'),
  ].join('\n');
  return { figures, details, analysis: [] };
}
