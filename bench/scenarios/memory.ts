import { NatsServer } from '@sluice/testkit';
import { BenchContext, BenchGroup, CPU } from '../lib/context';
import { fixedRate } from '../lib/fixed-rate';
import { chatBody, metrics, MODEL } from '../lib/http';
import { heapAfterGc, inspectFlag } from '../lib/inspector';
import { describeProcess } from '../lib/processes';
import { rssMb } from '../lib/procfs';
import { below, figure, Plan, Scenario, ScenarioResult } from '../lib/scenario';
import { measureScrapeStall } from '../lib/scrape-stall';
import { DECODE_SHEDDING, startFrontend, Started, startWorker } from '../lib/sluice';
import { fmt, freePort, median, sleep, uniqueNamespace, waitFor } from '../lib/util';

const WORKERS = 1000;
const RANKS = 8;
const TRAFFIC_RPS = 100;

/** Publishes every rank's report once a second until stopped; resolves when it is connected. */
async function startFlood(g: BenchGroup, natsUrl: string, ns: string, endpoint: string) {
  const args = [natsUrl, ns, endpoint, MODEL, ...[WORKERS, RANKS, 4, WORKERS * RANKS].map(String)];
  const proc = g.tool('tools/report-flood.js', args);
  await waitFor(
    () => proc.stdout.includes('"ready"') || !proc.running || undefined,
    'report-flood ready',
    30000,
  );
  if (!proc.running) throw new Error(`report-flood exited: ${proc.output.slice(-1000)}`);
  return proc;
}

const tracked = async (fe: Started): Promise<number> =>
  (
    (await metrics(fe.url)).match(
      /^dynamo_frontend_worker_busy\{[^}]*model="Qwen\/Qwen3-0\.6B"/gm,
    ) ?? []
  ).length;

/** MB of V8 heap and ArrayBuffer stores left after a full collection forced through the inspector. */
const retainedMb = async (port: number): Promise<number> => {
  const h = await heapAfterGc(port);
  return (h.usedBytes + h.backingBytes) / 2 ** 20;
};

/**
 * Frontend memory with 1,000 workers × 8 ranks reporting once a second (half the workers busy)
 * and steady admitted traffic, in consecutive windows; then the event-loop stall of a `/metrics`
 * scrape with every rank tracked.
 */
export const memoryScenario: Scenario = {
  id: 'memory',
  title: 'Memory with 1,000 workers × 8 ranks',
  plan: (quick) => (quick ? { rounds: 2, seconds: 12 } : { rounds: 4, seconds: 175 }),
  async run(ctx: BenchContext, plan: Plan): Promise<ScenarioResult> {
    const g = ctx.group();
    try {
      const nats = NatsServer.available()
        ? await NatsServer.start({ cpu: CPU.client, group: g })
        : null;
      const natsUrl = nats?.url ?? ctx.natsUrl;
      const ns = uniqueNamespace('memory');
      const worker = await startWorker(g, ['--speedup', '0'], { cpu: CPU.client });
      const inspector = await freePort();
      const fe = await startFrontend(g, {
        ...{ natsUrl, databaseUrl: ctx.databaseUrl, namespace: ns, flags: DECODE_SHEDDING },
        ...{ cpu: CPU.server, nodeArgs: [inspectFlag(inspector)] },
      });
      const flood = await startFlood(g, natsUrl, ns, worker.url);
      await waitFor(
        async () => (await tracked(fe)) >= WORKERS || undefined,
        'every worker tracked',
        60000,
        1000,
      );
      const [warmS, windowS] = ctx.quick ? [1, 2] : [15, 30];
      ctx.log(
        `${WORKERS * RANKS} reports/s, ${TRAFFIC_RPS} requests/s: ${plan.rounds} windows of ${windowS} s`,
      );
      const traffic = fixedRate(g, {
        url: `${fe.url}/v1/chat/completions`,
        ...{
          rate: TRAFFIC_RPS,
          durationS: warmS + plan.rounds * windowS + 2,
          body: chatBody(MODEL, 8),
          connections: 32,
        },
      });
      traffic.catch(() => undefined);
      // Start-up allocations (compiled code, pools, the first reports) are not growth.
      await sleep(warmS * 1000);
      const retained = [await retainedMb(inspector)];
      const peaks: number[] = [];
      const growth: number[] = [];
      for (let w = 0; w < plan.rounds; w++) {
        const t0 = Date.now();
        let peak = 0;
        while (Date.now() - t0 < windowS * 1000) {
          peak = Math.max(peak, rssMb(fe.proc.pid) ?? NaN);
          await sleep(1000);
        }
        retained.push(await retainedMb(inspector));
        peaks.push(peak);
        growth.push(((retained[w + 1] - retained[w]) * 60000) / (Date.now() - t0));
        ctx.log(`window ${w + 1}: RSS peak ${fmt(peak)} MB, retained ${fmt(retained[w + 1])} MB`);
      }
      await flood.stop();
      const stopped = /"sent":(\d+),"seconds":([\d.]+)/.exec(flood.stdout);
      const reportRate = Number(stopped?.[1]) / Number(stopped?.[2]);
      const t = await traffic;
      const scrapes = ctx.quick ? 3 : 8;
      const stalls = [];
      for (let r = 0; r < plan.rounds; r++)
        stalls.push(await measureScrapeStall(fe.url, fe.proc.pid, scrapes));
      return {
        figures: [
          figure('Frontend RSS, peak of a window', 'MB', peaks, below(250)),
          figure('Retained memory growth over a window', 'MB/min', growth, below(2)),
          figure(
            'Event-loop stall of a `/metrics` scrape, median of a round',
            'ms',
            stalls.map((s) => median(s.stalls)),
            below(10),
          ),
          figure(
            'Frontend CPU per `/metrics` scrape',
            'ms',
            stalls.map((s) => s.cpuMsPerScrape),
          ),
        ],
        details: [
          `${WORKERS.toLocaleString('en-US')} workers × ${RANKS} ranks, each rank reporting once a second over 4 NATS connections`,
          `from one publisher (bench/tools/report-flood, ${fmt(reportRate)} reports/s sent) to a private`,
          `nats-server; half the workers over the decode threshold. ${TRAFFIC_RPS} chat requests/s admitted and proxied to a`,
          `simulated worker (${t.sent} sent, statuses ${JSON.stringify(t.statuses)}). The frontend on CPU 0, the`,
          `rest on CPU 1. After ${warmS} s of that load, RSS (\`VmRSS\`) every second in ${plan.rounds} windows of ${windowS} s; at the start and end of each window a`,
          "full collection forced through the frontend's inspector (`--inspect`, the only flag it has here",
          'beyond the bench’s own) gives what it retains (V8 heap and ArrayBuffer stores): RSS climbs to a',
          'plateau V8 keeps, so growth is judged on what is retained, ' +
            `${retained.map((x) => fmt(x)).join(' → ')} MB.`,
          `Scrape stall: with the reports and traffic stopped and every worker still tracked, ${plan.rounds} rounds`,
          `of ${scrapes} scrapes of \`/metrics\` (${fmt(stalls[0].bytes / 1024, 0)} KiB), each while the bench sends \`GET /live\``,
          'back to back on one kept-alive connection: a stall is the longest gap between two answers',
          'while the scrape was served. CPU per scrape: back-to-back scrapes without the probe, from `/proc`.',
          '',
          `Stalls (ms): ${stalls.map((s) => s.stalls.map((x) => fmt(x)).join(', ')).join(' | ')}; the longest gap in as long a window`,
          `just after each scrape, for the machine's own noise: ${stalls.map((s) => s.idleGaps.map((x) => fmt(x)).join(', ')).join(' | ')}.`,
        ].join('\n'),
        processes: [describeProcess('Sluice frontend', fe.proc.pid)],
      };
    } finally {
      await g.stopAll();
    }
  },
};
