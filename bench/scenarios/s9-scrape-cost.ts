import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, NatsConnection } from 'nats';
import { BenchContext, CPU } from '../lib/context';
import { metrics, metricSum, MODEL } from '../lib/http';
import { BridgeOptions, metricSamples, Proc, ProcessGroup, startBridge } from '@sluice/testkit';
import { monotonicUs, ProfileSummary, summarizeProfile } from '../lib/profile';
import { cpuMs, CpuMeter, rssMb } from '../lib/procfs';
import { startPrivateNats } from '../lib/sluice';
import { sleep, uniqueNamespace, waitFor } from '../lib/util';
import { VLLM_FILTERED_PATH } from '@sluice/bridge';

export const TARGETS = 1000;
export const INTERVAL_MS = 250;
const RESULTS = ['ok', 'error', 'timeout', 'unparsable'] as const;

export interface ScrapeCost {
  targets: number;
  /** Whether the engines answered the bridge's `?name[]=` filter, as vLLM's exporter does. */
  filtered: boolean;
  bodyBytes: number;
  /** What one scrape reads: the filtered answer, or the whole body. */
  answerBytes: number;
  windowS: number;
  /** Scrapes counted by the bridge in the window, by result. */
  scrapes: Record<(typeof RESULTS)[number], number>;
  /** Reports that arrived on NATS in the window, and the distinct workers among them. */
  reports: number;
  workers: number;
  workerDowns: number;
  /** Start-up, before the window: the first scrapes of every target start at once. */
  startup: {
    allReportedS: number;
    settledS: number;
    settled: boolean;
    failedScrapes: number;
    workerDowns: number;
  };
  /** Per report: its age on arrival (now − timestamp_ms). */
  arrivalAgeMs: number[];
  /** Per report: the age the worker's previous report had reached when this one arrived. */
  ageBeforeNextMs: number[];
  /** `sluice_bridge_report_age_seconds` of every worker, sampled during the window. */
  gaugeAgeMs: number[];
  gaugeSamples: number;
  bridgeCpuMs: number;
  rssMaxMb: number | null;
  farmCores: number;
  natsPrivate: boolean;
  /** CPU used outside the bench's processes during the window (cores: mean, peak). */
  otherLoad: { mean: number; max: number };
  /** The bridge's hot spots in a second, profiled run (full runs). */
  profile: ProfileSummary | null;
}

/** Watches the bridge's reports on NATS: arrival age and how old each worker's view got. */
class ReportWatch {
  readonly arrivalAgeMs: number[] = [];
  readonly ageBeforeNextMs: number[] = [];
  readonly seen = new Set<string>();
  readonly inWindow = new Set<string>();
  reports = 0;
  /** worker_down messages since the bridge started. */
  downs = 0;
  recording = false;
  private readonly last = new Map<string, number>();

  constructor(
    readonly nc: NatsConnection,
    namespace: string,
  ) {
    const dec = new TextDecoder();
    nc.subscribe(`namespace.${namespace}.kv_metrics`, {
      callback: (_err, msg) => {
        const now = Date.now();
        const r = JSON.parse(dec.decode(msg.data)) as { worker_id: string; timestamp_ms: number };
        const prev = this.last.get(r.worker_id);
        this.last.set(r.worker_id, r.timestamp_ms);
        this.seen.add(r.worker_id);
        if (!this.recording) return;
        this.reports++;
        this.inWindow.add(r.worker_id);
        this.arrivalAgeMs.push(now - r.timestamp_ms);
        if (prev !== undefined) this.ageBeforeNextMs.push(now - prev);
      },
    });
    nc.subscribe(`namespace.${namespace}.worker_down`, {
      callback: () => {
        this.downs++;
      },
    });
  }
}

async function startFarm(
  g: ProcessGroup,
  filtered: boolean,
): Promise<{ proc: Proc; ports: number[]; bodyBytes: number }> {
  const args = [String(TARGETS), MODEL, ...(filtered ? [] : ['--ignore-name-filter'])];
  const proc = g.node('engine-farm', 'dist/bench/tools/engine-farm.js', args, {
    cpu: CPU.client,
    captureStdout: true,
  });
  const ready = await waitFor(
    () => {
      if (!proc.running) throw new Error(`engine-farm exited: ${proc.output.slice(-1000)}`);
      const line = proc.stdout.split('\n').find((l) => l.startsWith('{'));
      return line ? (JSON.parse(line) as { ports: number[]; bodyBytes: number }) : undefined;
    },
    'engine-farm ready',
    60000,
  );
  return { proc, ...ready };
}

/**
 * The same bridge again under `node --cpu-prof` (the profiler's overhead stays out of the
 * figures): warm-up, then the hot spots of a few seconds of scraping every target.
 */
async function profileBridge(
  ctx: BenchContext,
  options: BridgeOptions,
  watch: ReportWatch,
): Promise<ProfileSummary> {
  ctx.log('profiling the bridge (node --cpu-prof)');
  const dir = mkdtempSync(join(ctx.tmpDir, 'cpuprof-bridge-'));
  const { proc: bridge } = await startBridge({
    ...options,
    name: 'bridge-profiled',
    nodeArgs: [
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
      '-r',
      join(__dirname, '..', 'tools', 'profile-exit.js'),
    ],
  });
  watch.seen.clear();
  await waitFor(() => watch.seen.size >= TARGETS || undefined, 'every target reported', 60000);
  await sleep((ctx.quick ? 2 : 5) * 1000);
  const fromUs = monotonicUs();
  await sleep((ctx.quick ? 3 : 8) * 1000);
  const toUs = monotonicUs();
  bridge.child.kill('SIGUSR2');
  await bridge.exited;
  return summarizeProfile(dir, { fromUs, toUs });
}

/**
 * Part 1 of scenario 9: one standalone bridge scraping TARGETS fake vLLM engines every 250 ms
 * through a targets file and publishing on NATS; the bench reads the reports as a frontend would.
 * `filtered`: the engines answer the bridge's metric-name filter (vLLM's exporter does), or send
 * the whole body to every scrape.
 */
export async function measureScrapeCost(ctx: BenchContext, filtered: boolean): Promise<ScrapeCost> {
  const g = ctx.group();
  let nc: NatsConnection | undefined;
  try {
    const priv = await startPrivateNats(g, CPU.client);
    const natsUrl = priv?.url ?? ctx.natsUrl;
    const ns = uniqueNamespace('s9');
    nc = await connect({ servers: natsUrl, name: 'sluice-bench-s9' });
    const watch = new ReportWatch(nc, ns);
    const farm = await startFarm(g, filtered);
    const answer = await fetch(`http://127.0.0.1:${farm.ports[0]}${VLLM_FILTERED_PATH}`);
    const answerBytes = (await answer.arrayBuffer()).byteLength;
    const file = join(ctx.tmpDir, 's9-targets.txt');
    const lines = farm.ports.map(
      (p, i) => `engine-${String(i + 1).padStart(4, '0')}=http://127.0.0.1:${p}`,
    );
    writeFileSync(file, `${lines.join('\n')}\n`);
    const options: BridgeOptions = {
      ...{ natsUrl, namespace: ns, group: g, cpu: CPU.server },
      flags: ['--engine', 'vllm', '--targets-file', file],
    };
    const startedAt = Date.now();
    const { proc: bridge, url: ops } = await startBridge(options);
    await waitFor(() => watch.seen.size >= TARGETS || undefined, 'every target reported', 60000);
    const allReportedS = (Date.now() - startedAt) / 1000;
    const count = (text: string, result: string): number =>
      metricSum(text, 'sluice_bridge_scrapes_total', { result });
    const failed = (text: string): number =>
      RESULTS.filter((r) => r !== 'ok').reduce((a, r) => a + count(text, r), 0);
    await sleep((ctx.quick ? 3 : 10) * 1000);
    // Steady state: no failed scrape for 3 s (bounded: a bridge that never settles is measured as is).
    const settleBy = Date.now() + (ctx.quick ? 15000 : 60000);
    let failures = failed(await metrics(ops));
    let settled = false;
    while (!settled && Date.now() < settleBy) {
      await sleep(3000);
      const now = failed(await metrics(ops));
      settled = now === failures;
      failures = now;
    }
    const startup = {
      allReportedS,
      settledS: (Date.now() - startedAt) / 1000,
      settled,
      failedScrapes: failures,
      workerDowns: watch.downs,
    };
    const windowS = ctx.quick ? 6 : 30;
    ctx.log(
      `${TARGETS} targets (${answerBytes} of ${farm.bodyBytes} bytes of /metrics per scrape) all reported after ${allReportedS.toFixed(1)} s; ` +
        `${settled ? 'settled' : 'not settled'} after ${startup.settledS.toFixed(0)} s (${failures} failed scrapes, ${watch.downs} worker_down); ${windowS} s measured`,
    );

    const before = await metrics(ops);
    const cpu0 = cpuMs(bridge.pid);
    const farmMeter = new CpuMeter(farm.proc.pid);
    const t0 = Date.now();
    const downs0 = watch.downs;
    watch.recording = true;
    const gaugeAgeMs: number[] = [];
    let gaugeSamples = 0;
    let rssMax: number | null = null;
    const every = ctx.quick ? 1000 : 2000;
    for (let t = every; t < windowS * 1000; t += every) {
      await sleep(Math.max(0, t0 + t - Date.now()));
      const text = await metrics(ops);
      for (const v of metricSamples(text, 'sluice_bridge_report_age_seconds'))
        gaugeAgeMs.push(v * 1000);
      gaugeSamples++;
      rssMax = Math.max(rssMax ?? 0, rssMb(bridge.pid) ?? 0);
    }
    await sleep(Math.max(0, t0 + windowS * 1000 - Date.now()));
    watch.recording = false;
    const cpu1 = cpuMs(bridge.pid);
    const wall = Date.now() - t0;
    const after = await metrics(ops);
    const farmCores = farmMeter.read();
    const otherLoad = ctx.foreign.between(t0, t0 + wall);
    const scrapes = Object.fromEntries(
      RESULTS.map((r) => [r, count(after, r) - count(before, r)]),
    ) as ScrapeCost['scrapes'];
    if (!bridge.running) throw new Error(`the bridge exited: ${bridge.output.slice(-1000)}`);
    // Counted before the bridge stops: a stopping bridge says worker_down for every engine.
    const workerDowns = watch.downs - downs0;
    let profile: ProfileSummary | null = null;
    if (ctx.profile && filtered) {
      await bridge.stop();
      profile = await profileBridge(ctx, options, watch);
    }
    return {
      targets: TARGETS,
      filtered,
      bodyBytes: farm.bodyBytes,
      answerBytes,
      windowS: wall / 1000,
      scrapes,
      reports: watch.reports,
      workers: watch.inWindow.size,
      workerDowns,
      startup,
      arrivalAgeMs: watch.arrivalAgeMs,
      ageBeforeNextMs: watch.ageBeforeNextMs,
      gaugeAgeMs,
      gaugeSamples,
      bridgeCpuMs: cpu1 - cpu0,
      rssMaxMb: rssMax,
      farmCores,
      natsPrivate: priv !== null,
      otherLoad,
      profile,
    };
  } finally {
    await nc?.close();
    await g.stopAll();
  }
}
