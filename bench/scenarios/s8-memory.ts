const YOUNG_GENERATION_FLAG = '--max-semi-space-size=16';
import { BenchContext, CPU, Figure, Scenario, ScenarioResult, verdict } from '../lib/context';
import { fixedRate } from '../lib/fixed-rate';
import { FLOOD_MODEL } from '../lib/flood';
import { chatBody, metrics } from '../lib/http';
import { heapAfterGc, inspectFlag } from '../lib/inspector';
import { rssMb } from '../lib/procfs';
import { startFrontend } from '../lib/sluice';
import {
  interleavedScrapeStalls,
  ScrapeStall,
  stallDetails,
  stallFigure,
} from '../lib/scrape-stall';
import { fmt, freePort, maxOf, median, minOf, slope, sleep } from '../lib/util';
import { CONNECTIONS, RANKS, Rig, startRig, WORKERS } from './s4-ingest';

const RSS_TARGET_MB = 250;
/**
 * "No growth trend": what the frontend keeps — V8's heap and ArrayBuffer stores right after a
 * full collection forced through its inspector — grows by less than this per minute between
 * before the load and its end. RSS cannot tell: V8 keeps pages it has grown into
 * committed, so RSS steps up to a plateau with no leak at all, and a sawtooth comes and goes.
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
      const inspectorPort = await freePort();
      rig = await startRig(ctx, g, 's8', 'mixed', [inspectFlag(inspectorPort)]);
      const { fe, flood } = rig;
      const rssStart = rssMb(fe.proc.pid);
      // Beside it, a frontend on V8's default young generation (no --max-semi-space-size), fed
      // the same reports and its own traffic: what the shipped cap saves, in the same run.
      const besidePort = await freePort();
      const beside = await startFrontend(g, {
        ...rig.frontendOptions,
        cpu: CPU.server,
        name: 'frontend-v8-defaults',
        nodeArgs: [inspectFlag(besidePort)],
      });
      const durationS = ctx.quick ? 12 : 120;
      const warmupS = ctx.quick ? 4 : 30;
      ctx.log(
        `${WORKERS * RANKS} reports/s (every rank once a second) and ${TRAFFIC_RPS} chat requests/s for ${durationS} s; RSS sampled every 2 s`,
      );
      const t0 = Date.now();
      // What each frontend keeps (V8's heap after a forced full collection), before the load and
      // at its end: a leak raises it, the GC sawtooth does not. Never in between, where a forced
      // collection would cut the sawtooth whose peak is measured.
      const retained: Array<[number, number]> = [];
      const besideRetained: Array<[number, number]> = [];
      // The one beside learns the workers from the load's reports: it is compared at the end only.
      const keep = async (port: number, into: Array<[number, number]>): Promise<void> => {
        const h = await heapAfterGc(port);
        into.push([(Date.now() - t0) / 1000, (h.usedBytes + h.backingBytes) / 2 ** 20]);
      };
      await keep(inspectorPort, retained);
      flood.send({ cmd: 'steady', rate: WORKERS * RANKS });
      await flood.next('steady-started');
      const load = (url: string): ReturnType<typeof fixedRate> =>
        fixedRate(
          g,
          `${url}/v1/chat/completions`,
          TRAFFIC_RPS,
          durationS,
          chatBody(FLOOD_MODEL, 8),
          32,
        );
      const traffic = load(fe.url);
      const besideTraffic = load(beside.url);
      // Awaited below; if the sampling fails first, its error is the one to report, not theirs.
      for (const p of [traffic, besideTraffic]) p.catch(() => undefined);
      const samples: Array<[number, number]> = [];
      const besideSamples: Array<[number, number]> = [];
      const sample = (into: Array<[number, number]>, proc: typeof fe.proc): number => {
        const rss = rssMb(proc.pid);
        if (rss === null) throw new Error(`a frontend exited:\n${proc.output.slice(-2000)}`);
        into.push([(Date.now() - t0) / 1000, rss]);
        return rss;
      };
      while (Date.now() - t0 < durationS * 1000) {
        const rss = sample(samples, fe.proc);
        const v8Defaults = sample(besideSamples, beside.proc);
        if (samples.length % 15 === 0)
          ctx.log(
            `${fmt((Date.now() - t0) / 1000, 0)} s: RSS ${fmt(rss)} MB (V8 defaults beside: ${fmt(v8Defaults)} MB)`,
          );
        await sleep(2000);
      }
      await keep(inspectorPort, retained);
      await keep(besidePort, besideRetained);
      flood.send({ cmd: 'stop' });
      const stopped = await flood.next<{ event: string; sent: number }>('stopped');
      const t = await traffic;
      await besideTraffic;
      const text = await metrics(fe.url);
      const tracked = (
        text.match(/^dynamo_frontend_worker_busy\{[^}]*model="Qwen\/Qwen3-0.6B"/gm) ?? []
      ).length;
      await flood.quit();
      // The scrape stall of both, in alternating blocks: what the cap does to it, same minutes.
      const [stall, besideStall] = await interleavedScrapeStalls(
        { url: fe.url, pid: fe.proc.pid },
        { url: beside.url, pid: beside.proc.pid },
        ctx.quick ? 10 : 30,
      );
      ctx.log(`scrape stall ${stall.stalls.map((x) => fmt(x)).join(', ')} ms`);
      ctx.log(`V8 defaults beside: ${besideStall.stalls.map((x) => fmt(x)).join(', ')} ms`);
      return summarize(
        { rss: samples, retained, stall },
        { rss: besideSamples, retained: besideRetained, stall: besideStall },
        {
          warmupS,
          durationS,
          rssStart,
          tracked,
          reportRate: stopped.sent / durationS,
          traffic: t,
          quick: ctx.quick,
        },
      );
    } finally {
      await rig?.bus.close();
      await g.stopAll();
    }
  },
};

/** What the scenario measured of one frontend: [s, MB] series and its scrape stalls. */
interface Measured {
  /** RSS every 2 s. */
  rss: Array<[number, number]>;
  /** V8's heap and ArrayBuffer stores after a forced full collection. */
  retained: Array<[number, number]>;
  stall: ScrapeStall;
}

/** The run around the measures (the frontend as shipped, its load). */
interface RunFacts {
  warmupS: number;
  durationS: number;
  rssStart: number | null;
  tracked: number;
  reportRate: number;
  traffic: { sent: number; statuses: Record<string, number>; p99_us: number | null };
  quick: boolean;
}

function summarize(shipped: Measured, beside: Measured, run: RunFacts): ScenarioResult {
  const { rss: samples, retained, stall } = shipped;
  const { rss: besideSamples, retained: besideRetained, stall: besideStall } = beside;
  const { warmupS, durationS, rssStart, tracked, reportRate, traffic, quick } = run;
  const rss = samples.map(([, y]) => y);
  const steady = samples.filter(([x]) => x >= warmupS);
  const rawTrend = slope(steady) * 60;
  const floors = envelope(steady, 4);
  const rssTrend = slope(floors) * 60;
  // Retained growth per minute between the two forced collections.
  const [first, last] = [retained[0], retained[retained.length - 1]];
  const trend =
    retained.length >= 2 && last[0] > first[0]
      ? ((last[1] - first[1]) / (last[0] - first[0])) * 60
      : NaN;
  const peak = maxOf(rss) ?? NaN;
  const besideRss = besideSamples.map(([, y]) => y);
  const besidePeak = maxOf(besideRss) ?? NaN;
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
      name: `Retained memory growth over the run (V8 heap and buffers after a full collection forced before the load and at its end, ${fmt(first?.[0], 0)} s → ${fmt(last?.[0], 0)} s)`,
      target: `no trend (< ${TREND_LIMIT_MB_PER_MIN} MB/min)`,
      unit: 'MB/min',
      median: trend,
      min: null,
      max: null,
      verdict: quick ? 'n/a' : verdict(Number.isFinite(trend) && trend < TREND_LIMIT_MB_PER_MIN),
      note: quick ? 'too short to judge in --quick' : undefined,
    },
    {
      scenario: 8,
      name: `Frontend RSS beside it on V8's default young generation (no \`${YOUNG_GENERATION_FLAG}\`), same reports and traffic (peak)`,
      target: '(compare)',
      unit: 'MB',
      median: median(besideRss),
      min: minOf(besideRss),
      max: besidePeak,
      verdict: 'n/a',
      note: 'median column: median sample',
    },
    stallFigure(8, WORKERS * RANKS, stall),
    {
      ...stallFigure(8, WORKERS * RANKS, besideStall),
      name: `Event-loop stall of a \`/metrics\` scrape beside it, V8's default young generation (scrapes interleaved)`,
      target: '(compare)',
      verdict: 'n/a',
      note: 'median scrape',
    },
  ];
  const every = Math.max(1, Math.floor(samples.length / 12));
  const series = (xs: Array<[number, number]>): string =>
    xs
      .filter((_, i) => i % every === 0)
      .map(([x, y]) => `${fmt(x, 0)} s: ${fmt(y)}`)
      .join(' · ');
  const details = [
    `${WORKERS.toLocaleString('en-US')} workers × ${RANKS} ranks (half of the workers busy), each rank reporting once a second`,
    `(${fmt(reportRate)} reports/s over ${CONNECTIONS} NATS connections from one publisher process), and ${TRAFFIC_RPS} chat requests/s admitted`,
    `and proxied to a simulated worker (${traffic.sent} sent, statuses ${JSON.stringify(traffic.statuses)}, p99 ${fmt((traffic.p99_us ?? 0) / 1000, 1)} ms).`,
    `The frontend runs as shipped (\`node ${YOUNG_GENERATION_FLAG}\`, the image's \`NODE_OPTIONS\`); beside it a`,
    "second frontend on V8's default young generation gets the same reports and its own 100 requests/s.",
    `Both frontends on CPU 0, everything else on CPU 1. RSS (\`VmRSS\`) every 2 s for ${durationS} s; the frontend`,
    `tracked ${tracked} workers of the model at the end. RSS before the steady phase (after registering`,
    `every worker): ${fmt(rssStart)} MB. Retained memory (V8's heap and ArrayBuffer stores after a full collection`,
    `forced through the frontend's inspector, \`--inspect\`): ${retained.map(([x, y]) => `${fmt(y)} MB at ${fmt(x, 0)} s`).join(', ')}`,
    `(beside it, on V8's defaults: ${besideRetained.map(([x, y]) => `${fmt(y)} MB at ${fmt(x, 0)} s`).join(', ')}); the collections at the end come after the last RSS sample.`,
    `RSS for comparison: its lower envelope after ${warmupS} s (minimum of each quarter: ${floors.map(([x, y]) => `${fmt(x, 0)} s ${fmt(y)} MB`).join(', ')})`,
    `has a slope of ${rssTrend.toFixed(1)} MB/min, a least-squares fit through every sample ${rawTrend.toFixed(1)} MB/min: V8 keeps`,
    'the pages it grew into, so RSS climbs to a plateau that says nothing of a leak.',
    '',
    `RSS (MB), as shipped: ${series(samples)}`,
    '',
    `RSS (MB), V8's default young generation: ${series(besideSamples)}`,
    '',
    stallDetails(stall),
    '',
    `The same beside it, on V8's default young generation, in alternating blocks of 5 scrapes (the frontend not measured stopped with SIGSTOP meanwhile): ${besideStall.stalls.map((x) => fmt(x)).join(', ')} ms.`,
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
        `state kept (beside it, V8's default young generation peaked at ${fmt(besidePeak)} MB); allocating less per report lowers it.`,
    );
  }
  if (figures[1].verdict === 'MISS') {
    analysis.push(
      `**Retained memory growth (${trend.toFixed(1)} MB/min after warm-up).** What the frontend keeps after a full collection grew under constant load: state growing per report or per request (take two heap snapshots through the inspector and compare them).`,
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
