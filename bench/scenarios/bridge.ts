import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, NatsConnection } from 'nats';
import { NatsServer, startBridge } from '@sluice/testkit';
import { BenchContext, BenchGroup, CPU } from '../lib/context';
import { metrics, metricSum, MODEL } from '../lib/http';
import { describeProcess } from '../lib/processes';
import { cpuMs, rssMb } from '../lib/procfs';
import { atMost, figure, Plan, Scenario, ScenarioResult } from '../lib/scenario';
import { fmt, percentile, sleep, uniqueNamespace, waitFor } from '../lib/util';

const TARGETS = 1000;
const INTERVAL_MS = 250;
const SCRAPES = 'sluice_bridge_scrapes_total';

/**
 * Reads the bridge's reports as a frontend would: for each, how old the worker's previous report
 * had grown by the time this one arrived (the oldest a frontend's view of it gets).
 */
class ReportWatch {
  readonly seen = new Set<string>();
  ages: number[] = [];
  private readonly last = new Map<string, number>();

  constructor(nc: NatsConnection, namespace: string) {
    const dec = new TextDecoder();
    nc.subscribe(`namespace.${namespace}.kv_metrics`, {
      callback: (_err, msg) => {
        const r = JSON.parse(dec.decode(msg.data)) as { worker_id: string; timestamp_ms: number };
        const prev = this.last.get(r.worker_id);
        if (prev !== undefined) this.ages.push(Date.now() - prev);
        this.last.set(r.worker_id, r.timestamp_ms);
        this.seen.add(r.worker_id);
      },
    });
  }
}

async function startFarm(g: BenchGroup): Promise<{ ports: number[]; bodyBytes: number }> {
  const proc = g.server('engine-farm', 'tools/engine-farm.js', [String(TARGETS), MODEL], {
    cpu: CPU.client,
    captureStdout: true,
  });
  return waitFor(
    () => {
      if (!proc.running) throw new Error(`engine-farm exited: ${proc.output.slice(-1000)}`);
      const line = proc.stdout.split('\n').find((l) => l.startsWith('{'));
      return line ? (JSON.parse(line) as { ports: number[]; bodyBytes: number }) : undefined;
    },
    'engine-farm ready',
    60000,
  );
}

/**
 * One standalone bridge scraping 1,000 fake vLLM engines, each sending its whole ~45 KB
 * exposition, at the default interval: what a scrape costs and how stale the reports get.
 */
export const bridgeScenario: Scenario = {
  id: 'bridge',
  title: 'Engine bridge: scrape cost at 1,000 engines',
  plan: (quick) => (quick ? { rounds: 2, seconds: 12 } : { rounds: 4, seconds: 70 }),
  async run(ctx: BenchContext, plan: Plan): Promise<ScenarioResult> {
    const g = ctx.group();
    let nc: NatsConnection | undefined;
    try {
      const nats = NatsServer.available()
        ? await NatsServer.start({ cpu: CPU.client, group: g })
        : null;
      const natsUrl = nats?.url ?? ctx.natsUrl;
      const ns = uniqueNamespace('bridge');
      nc = await connect({ servers: natsUrl, name: 'sluice-bench-bridge' });
      const watch = new ReportWatch(nc, ns);
      const farm = await startFarm(g);
      const file = join(ctx.tmpDir, 'bridge-targets.txt');
      writeFileSync(
        file,
        farm.ports.map((p, i) => `engine-${i + 1}=http://127.0.0.1:${p}\n`).join(''),
      );
      const { proc: bridge, url: ops } = await startBridge({
        ...{ natsUrl, namespace: ns, group: g, cpu: CPU.server },
        flags: ['--engine', 'vllm', '--targets-file', file],
      });
      await waitFor(() => watch.seen.size >= TARGETS || undefined, 'every target reported', 60000);
      await sleep((ctx.quick ? 1 : 10) * 1000);
      const windowS = ctx.quick ? 2 : 12;
      ctx.log(`${TARGETS} engines reporting; ${plan.rounds} windows of ${windowS} s`);
      const age: number[] = [];
      const cpuUs: number[] = [];
      const rate: number[] = [];
      let rss = 0;
      for (let w = 0; w < plan.rounds; w++) {
        const before = metricSum(await metrics(ops), SCRAPES);
        const cpu0 = cpuMs(bridge.pid);
        const t0 = Date.now();
        watch.ages = [];
        await sleep(windowS * 1000);
        const cpu = cpuMs(bridge.pid) - cpu0;
        const scrapes = metricSum(await metrics(ops), SCRAPES) - before;
        age.push(percentile(watch.ages, 99));
        cpuUs.push((cpu * 1000) / scrapes);
        rate.push(scrapes / ((Date.now() - t0) / 1000));
        rss = Math.max(rss, rssMb(bridge.pid) ?? 0);
        ctx.log(
          `${fmt(rate[w])} scrapes/s, ${fmt(cpuUs[w])} µs CPU each, report age p99 ${fmt(age[w], 0)} ms`,
        );
      }
      return {
        figures: [
          figure(
            'Report age when the next report arrives, p99 of a window',
            'ms',
            age,
            atMost(2 * INTERVAL_MS),
          ),
          figure('Bridge CPU per scrape of a whole vLLM exposition', 'µs', cpuUs),
          figure(
            `Scrapes per second achieved (${(TARGETS * 1000) / INTERVAL_MS} offered)`,
            'scrapes/s',
            rate,
          ),
        ],
        details: [
          `${TARGETS.toLocaleString('en-US')} fake vLLM engines on loopback, one port each, in one process (bench/tools/engine-farm)`,
          `on CPU 1, each answering every scrape with a realistic vLLM \`/metrics\` body of ${fmt(farm.bodyBytes)} bytes (process`,
          "and GC collectors, the HTTP instrumentator, vLLM's gauges, counters and 14 histograms) whatever",
          'the query asks for. One standalone bridge (`--engine vllm --targets-file`) on CPU 0 scrapes',
          `them all every ${INTERVAL_MS} ms and publishes on a private nats-server; the bench reads every report as a`,
          'frontend would. *Report age*: for each report, how old the same worker’s previous report had',
          `grown when it arrived; the target is two scrape intervals. CPU: the bridge's own, from \`/proc\`,`,
          `over the scrapes it counted (\`${SCRAPES}\`). Bridge RSS at most ${fmt(rss)} MB.`,
        ].join('\n'),
        processes: [describeProcess('bridge', bridge.pid)],
      };
    } finally {
      await nc?.close();
      await g.stopAll();
    }
  },
};
