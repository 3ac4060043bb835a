import { BenchContext, Figure, Scenario, ScenarioResult, verdict } from '../lib/context';
import { fixedRate } from '../lib/fixed-rate';
import { FLOOD_MODEL } from '../lib/flood';
import { chatBody, metrics } from '../lib/http';
import { rssMb } from '../lib/procfs';
import { measureScrapeStall, ScrapeStall, stallDetails, stallFigure } from '../lib/scrape-stall';
import { fmt, maxOf, median, minOf, slope, sleep } from '../lib/util';
import { CONNECTIONS, RANKS, Rig, startRig, WORKERS } from './s4-ingest';

const RSS_TARGET_MB = 250;
/**
 * "No growth trend": the slope of RSS's lower envelope after the warm-up stays below this. The
 * envelope (the minimum of each quarter of the run, i.e. what is left after the collector ran)
 * is what a leak raises; the GC sawtooth above it comes and goes.
 */
const TREND_LIMIT_MB_PER_MIN = 2;
const TRAFFIC_RPS = 100;

/**
 * Scenario 8: frontend RSS with 1,000 workers × 8 ranks tracked, every rank reporting once a
 * second (8,000 reports/s, half the workers busy), under steady traffic, sampled for 2 minutes.
 */
export const memoryScenario: Scenario = {
  id: 8,
  title: 'Memory with 1,000 workers × 8 ranks',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const g = ctx.group();
    let rig: Rig | undefined;
    try {
      rig = await startRig(ctx, g, 's8', 'mixed');
      const { fe, flood } = rig;
      const rssStart = rssMb(fe.proc.pid);
      const durationS = ctx.quick ? 12 : 120;
      const warmupS = ctx.quick ? 4 : 30;
      ctx.log(
        `${WORKERS * RANKS} reports/s (every rank once a second) and ${TRAFFIC_RPS} chat requests/s for ${durationS} s; RSS sampled every 2 s`,
      );
      flood.send({ cmd: 'steady', rate: WORKERS * RANKS });
      await flood.next('steady-started');
      const traffic = fixedRate(
        g,
        `${fe.url}/v1/chat/completions`,
        TRAFFIC_RPS,
        durationS,
        chatBody(FLOOD_MODEL, 8),
        32,
      );
      const t0 = Date.now();
      const samples: Array<[number, number]> = [];
      while (Date.now() - t0 < durationS * 1000) {
        const rss = rssMb(fe.proc.pid);
        if (rss === null) throw new Error(`the frontend exited:\n${fe.proc.output.slice(-2000)}`);
        samples.push([(Date.now() - t0) / 1000, rss]);
        if (samples.length % 15 === 0)
          ctx.log(`${fmt((Date.now() - t0) / 1000, 0)} s: RSS ${fmt(rss)} MB`);
        await sleep(2000);
      }
      flood.send({ cmd: 'stop' });
      const stopped = await flood.next<{ event: string; sent: number }>('stopped');
      const t = await traffic;
      const text = await metrics(fe.url);
      const tracked = (
        text.match(/^dynamo_frontend_worker_busy\{[^}]*model="Qwen\/Qwen3-0.6B"/gm) ?? []
      ).length;
      await flood.quit();
      const stall = await measureScrapeStall(fe.url, fe.proc.pid, ctx.quick ? 10 : 30);
      ctx.log(`scrape stall ${stall.stalls.map((x) => fmt(x)).join(', ')} ms`);
      return summarize(
        samples,
        stall,
        warmupS,
        durationS,
        rssStart,
        tracked,
        stopped.sent / durationS,
        t,
        ctx.quick,
      );
    } finally {
      await rig?.bus.close();
      await g.stopAll();
    }
  },
};

function summarize(
  samples: Array<[number, number]>,
  stall: ScrapeStall,
  warmupS: number,
  durationS: number,
  rssStart: number | null,
  tracked: number,
  reportRate: number,
  traffic: { sent: number; statuses: Record<string, number>; p99_us: number | null },
  quick: boolean,
): ScenarioResult {
  const rss = samples.map(([, y]) => y);
  const steady = samples.filter(([x]) => x >= warmupS);
  const rawTrend = slope(steady) * 60;
  const floors = envelope(steady, 4);
  const trend = slope(floors) * 60;
  const peak = maxOf(rss) ?? NaN;
  const figures: Figure[] = [
    {
      scenario: 8,
      name: `Frontend RSS, ${WORKERS.toLocaleString('en-US')} workers × ${RANKS} ranks, steady traffic (peak)`,
      target: `< ${RSS_TARGET_MB} MB`,
      unit: 'MB',
      median: median(rss),
      min: minOf(rss),
      max: peak,
      verdict: verdict(peak < RSS_TARGET_MB),
      note: 'median column: median sample; verdict on the peak',
    },
    {
      scenario: 8,
      name: `RSS growth trend after ${warmupS} s (lower envelope)`,
      target: `no trend (< ${TREND_LIMIT_MB_PER_MIN} MB/min)`,
      unit: 'MB/min',
      median: trend,
      min: null,
      max: null,
      verdict: quick ? 'n/a' : verdict(trend < TREND_LIMIT_MB_PER_MIN),
      note: quick ? 'too short to judge in --quick' : undefined,
    },
    stallFigure(8, WORKERS * RANKS, stall),
  ];
  const every = Math.max(1, Math.floor(samples.length / 12));
  const series = samples
    .filter((_, i) => i % every === 0)
    .map(([x, y]) => `${fmt(x, 0)} s: ${fmt(y)}`)
    .join(' · ');
  const details = [
    `${WORKERS.toLocaleString('en-US')} workers × ${RANKS} ranks (half of the workers busy), each rank reporting once a second`,
    `(${fmt(reportRate)} reports/s over ${CONNECTIONS} NATS connections from one publisher process), and ${TRAFFIC_RPS} chat requests/s admitted`,
    `and proxied to a simulated worker (${traffic.sent} sent, statuses ${JSON.stringify(traffic.statuses)}, p99 ${fmt((traffic.p99_us ?? 0) / 1000, 1)} ms).`,
    `Frontend on CPU 0, everything else on CPU 1. RSS (\`VmRSS\`) every 2 s for ${durationS} s; the frontend`,
    `tracked ${tracked} workers of the model at the end. RSS before the steady phase (after registering`,
    `every worker): ${fmt(rssStart)} MB. Trend: slope of the lower envelope after ${warmupS} s (minimum of each`,
    `quarter: ${floors.map(([x, y]) => `${fmt(x, 0)} s ${fmt(y)} MB`).join(', ')}); a least-squares fit through every`,
    `sample after ${warmupS} s gives ${rawTrend.toFixed(1)} MB/min, dominated by where the GC sawtooth happens to be.`,
    '',
    `RSS (MB): ${series}`,
    '',
    stallDetails(stall),
  ].join('\n');
  const analysis: string[] = [];
  if (figures[0].verdict === 'MISS') {
    analysis.push(
      `**Memory (peak ${fmt(peak)} MB, target < ${RSS_TARGET_MB} MB).** ${fmt(rssStart)} MB were resident once every worker ` +
        `was registered (per rank its state; the per-worker gauges are written at each scrape, not kept). ` +
        `Under load RSS swings between ` +
        `${fmt(minOf(floors.map(([, y]) => y)))} MB (after collections) and ${fmt(peak)} MB: a GC sawtooth. Every report ` +
        'allocates (the decoded JSON, the validated copy, a label object per gauge update) and V8 lets the heap grow by ' +
        'tens of MB before a major collection, so the peak is set by allocation rate and heap sizing more than by the ' +
        'state kept; allocating less per report, or a smaller heap limit, lowers it.',
    );
  }
  if (figures[1].verdict === 'MISS') {
    analysis.push(
      `**RSS trend (${trend.toFixed(1)} MB/min after warm-up).** See the samples in scenario 8; a steady rise under constant load points to state growing per report or per request.`,
    );
  }
  return { figures, details, analysis };
}

/** The minimum of each of `parts` equal time slices, placed at the time it was seen. */
function envelope(samples: Array<[number, number]>, parts: number): Array<[number, number]> {
  if (samples.length === 0) return [];
  const from = samples[0][0];
  const span = samples[samples.length - 1][0] - from || 1;
  const out: Array<[number, number]> = [];
  for (let i = 0; i < parts; i++) {
    const lo = from + (i * span) / parts;
    const hi = from + ((i + 1) * span) / parts;
    const slice = samples.filter(([x]) => x >= lo && x <= hi);
    if (slice.length) out.push(slice.reduce((a, b) => (b[1] < a[1] ? b : a)));
  }
  return out;
}
