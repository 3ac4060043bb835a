import { ReportBus } from '../lib/bus';
import { BenchContext, CPU, Figure, Scenario, ScenarioResult, verdict } from '../lib/context';
import { fixedRate, FixedRateResult } from '../lib/fixed-rate';
import { Flood, FloodDone, FLOOD_MODEL, SENTINEL_MODEL, SENTINEL_WORKER } from '../lib/flood';
import { chatBody, isOverload, metrics, metricSum, PacedProber } from '../lib/http';
import { NatsMonitor } from '../lib/nats-monitor';
import { ProcessGroup } from '@sluice/testkit';
import { profileMarkdown, ProfileSummary } from '../lib/profile';
import { startProfiledFrontend } from '../lib/profiled-frontend';
import { CpuMeter } from '../lib/procfs';
import {
  DECODE_SHEDDING,
  startFrontend,
  startPrivateNats,
  startWorker,
  Started,
} from '../lib/sluice';
import { fmt, nowNs, pct, percentile, sleep, uniqueNamespace } from '../lib/util';

const PATH = '/v1/chat/completions';
export const WORKERS = 1000;
export const RANKS = 8;
export const CONNECTIONS = 4;
const TRAFFIC_RPS = 200;
/** Probes (lag and sentinel) every 5 ms: ~200 requests/s, 10× finer than the 50 ms target. */
const PROBE_EVERY_MS = 5;
const FLAGS = [...DECODE_SHEDDING, '--worker-ttl-ms', '600000'];

export interface Step {
  rate: number;
  sent: number;
  absorbed: number;
  catchupMs: number;
  cpu: number;
  lag: number[];
  lagTimeouts: number;
  invalid: number;
  slowConsumers: number | null;
  delivered: number | null;
  /** Reports the frontend counted as received (`sluice_frontend_kv_metrics_received_total`). */
  received: number;
  pendingMaxBytes: number | null;
  disconnects: number;
  traffic: FixedRateResult;
  publisherBehind: number;
}

export interface Rig {
  g: ProcessGroup;
  /** Where and how the frontend was started, to start another one like it. */
  frontendOptions: { natsUrl: string; databaseUrl: string; namespace: string; flags: string[] };
  fe: Started;
  bus: ReportBus;
  flood: Flood;
  mon: NatsMonitor | null;
  qwen: Started;
  sentinelWorker: Started;
}

/** Resets the sentinel worker to free and waits until the frontend admits its model again. */
async function resetSentinel(rig: Rig, sentinel: PacedProber): Promise<void> {
  for (let rank = 0; rank < CONNECTIONS; rank++) {
    rig.bus.report({
      worker_id: SENTINEL_WORKER,
      model: SENTINEL_MODEL,
      endpoint: rig.sentinelWorker.url,
      dp_rank: rank,
      dp_size: CONNECTIONS,
      active_decode_blocks: 1,
    });
  }
  await sentinel.until((s) => s === 200, nowNs(), 60000);
}

const disconnectLines = (log: string): number =>
  (log.match(/NATS (disconnect|reconnect|error|closed)/gi) ?? []).length;

/** One flood step: R reports/s for D s with traffic and lag trials, then the catch-up. */
export async function runStep(
  rig: Rig,
  rate: number,
  durationS: number,
  lagProbes: boolean,
): Promise<Step> {
  const sentinel = new PacedProber(rig.fe.url, PATH, chatBody(SENTINEL_MODEL, 1), PROBE_EVERY_MS);
  const probe = new PacedProber(rig.fe.url, PATH, chatBody(FLOOD_MODEL, 1), PROBE_EVERY_MS);
  const lagReport = (busy: boolean): void =>
    rig.bus.report({
      worker_id: 'lag-probe',
      model: FLOOD_MODEL,
      endpoint: rig.qwen.url,
      active_decode_blocks: busy ? 99 : 10,
    });
  try {
    await resetSentinel(rig, sentinel);
    lagReport(false);
    await probe.until((s) => s === 200, nowNs(), 60000);
    const text0 = await metrics(rig.fe.url);
    const invalid0 = metricSum(text0, 'dynamo_frontend_kv_metrics_invalid_total');
    const received0 = metricSum(text0, RECEIVED);
    const slow0 = rig.mon ? await rig.mon.slowConsumers() : null;
    const out0 = rig.mon ? (await rig.mon.connection('sluice-frontend')).outMsgs : null;
    const disc0 = disconnectLines(rig.fe.proc.output);
    const meter = new CpuMeter(rig.fe.proc.pid);
    const traffic = fixedRate(
      rig.g,
      `${rig.fe.url}${PATH}`,
      TRAFFIC_RPS,
      durationS,
      chatBody(FLOOD_MODEL, 1),
      32,
    );
    rig.flood.send({ cmd: 'flood', rate, durationS });
    let finished: FloodDone | null = null;
    const done = rig.flood
      .next<FloodDone>('flood-done', durationS * 1000 + 120000)
      .then((d) => (finished = d));
    let pendingMax = 0;
    const pending = (async () => {
      while (!finished && rig.mon) {
        pendingMax = Math.max(
          pendingMax,
          (await rig.mon.connection('sluice-frontend')).pendingBytes,
        );
        await sleep(250);
      }
    })();
    const lag: number[] = [];
    let lagTimeouts = 0;
    while (lagProbes && !finished) {
      for (const busy of [true, false]) {
        const t0 = nowNs();
        lagReport(busy);
        try {
          const r = await probe.until(busy ? isOverload : (s) => s === 200, t0, 30000);
          lag.push(r.ns / 1e6);
        } catch {
          lagTimeouts++;
        }
        await sleep(10);
      }
    }
    const d = await done;
    await pending;
    // A sentinel lost with a dropped connection never arrives: give up after a minute.
    const seenMs = await sentinel
      .until(isOverload, nowNs(), 60000)
      .then(() => Date.now())
      .catch(() => NaN);
    const cpu = meter.read();
    const t = await traffic;
    const text = await metrics(rig.fe.url);
    return {
      rate,
      sent: d.sent,
      absorbed: d.sent / ((seenMs - d.startMs) / 1000),
      catchupMs: seenMs - d.sentinelMs,
      cpu,
      lag,
      lagTimeouts,
      invalid: metricSum(text, 'dynamo_frontend_kv_metrics_invalid_total') - invalid0,
      received: metricSum(text, RECEIVED) - received0,
      slowConsumers: rig.mon && slow0 !== null ? (await rig.mon.slowConsumers()) - slow0 : null,
      delivered:
        rig.mon && out0 !== null
          ? (await rig.mon.connection('sluice-frontend')).outMsgs - out0
          : null,
      pendingMaxBytes: rig.mon ? pendingMax : null,
      disconnects: disconnectLines(rig.fe.proc.output) - disc0,
      traffic: t,
      publisherBehind: d.behindMax,
    };
  } finally {
    await sentinel.close();
    await probe.close();
  }
}

/** Registers every flood worker once (outside any measurement) and waits until all are in. */
export async function prewarm(rig: Rig): Promise<void> {
  const sentinel = new PacedProber(rig.fe.url, PATH, chatBody(SENTINEL_MODEL, 1), PROBE_EVERY_MS);
  try {
    await resetSentinel(rig, sentinel);
    rig.flood.send({ cmd: 'flood', rate: 20000, durationS: (WORKERS * RANKS) / 20000 + 0.5 });
    await rig.flood.next('flood-done');
    await sentinel.until(isOverload, nowNs(), 120000);
  } finally {
    await sentinel.close();
  }
}

/**
 * The rig of scenarios 4 and 8: a private nats-server (when it can start), a frontend on the
 * server core, a simulated worker for the flooded model and one for the sentinel, and the flood
 * publisher for WORKERS × RANKS reports, every worker registered (prewarmed) before it returns.
 * The caller stops it with `rig.bus.close()` and `ctx`'s process group.
 */
export async function startRig(
  ctx: BenchContext,
  g: ProcessGroup,
  prefix: string,
  mode: 'busy' | 'mixed',
  /** Node flags of the frontend after those it ships with (e.g. an inspector). */
  nodeArgs: string[] = [],
): Promise<Rig> {
  const priv = await startPrivateNats(g, CPU.client);
  const natsUrl = priv?.url ?? ctx.natsUrl;
  const ns = uniqueNamespace(prefix);
  const bus = await ReportBus.connect(natsUrl, ns);
  try {
    const qwen = await startWorker(g, ['--speedup', '0'], { cpu: CPU.client, name: 'worker-qwen' });
    const sentinelWorker = await startWorker(g, ['--speedup', '0', '--model', SENTINEL_MODEL], {
      cpu: CPU.client,
      name: 'worker-sentinel',
    });
    const frontendOptions = { natsUrl, databaseUrl: ctx.databaseUrl, namespace: ns, flags: FLAGS };
    const fe = await startFrontend(g, { ...frontendOptions, cpu: CPU.server, nodeArgs });
    const flood = await Flood.start(g, {
      natsUrl,
      namespace: ns,
      endpoint: qwen.url,
      workers: WORKERS,
      ranks: RANKS,
      connections: CONNECTIONS,
      mode,
    });
    const mon = priv ? new NatsMonitor(priv.monitorUrl) : null;
    const rig: Rig = { g, frontendOptions, fe, bus, flood, mon, qwen, sentinelWorker };
    ctx.log(`registering ${WORKERS} workers × ${RANKS} ranks`);
    await prewarm(rig);
    return rig;
  } catch (err) {
    await bus.close();
    throw err;
  }
}

export const ingestScenario: Scenario = {
  id: 4,
  title: 'Monitor ingest',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const g = ctx.group();
    let rig: Rig | undefined;
    try {
      rig = await startRig(ctx, g, 's4', 'busy');
      const rates = ctx.quick ? [10000, 50000] : [10000, 25000, 50000, 75000, 100000];
      const seconds = ctx.quick ? 2 : 8;
      const steps: Step[] = [];
      for (const rate of rates) {
        const s = await runStep(rig, rate, seconds, true);
        steps.push(s);
        ctx.log(
          `${fmt(rate)} reports/s offered: absorbed ${fmt(s.absorbed)}/s, catch-up ${fmt(s.catchupMs)} ms, frontend CPU ${pct(s.cpu)}, ` +
            `lag p50 ${fmt(percentile(s.lag, 50), 1)} / p99 ${fmt(percentile(s.lag, 99), 1)} ms (${s.lag.length} trials), invalid ${s.invalid}, slow consumers ${s.slowConsumers ?? '?'}`,
        );
        // Past saturation a higher rate only lengthens the catch-up: stop escalating.
        if (
          !(s.catchupMs <= 20000) ||
          !(s.absorbed >= 0.8 * rate) ||
          (s.slowConsumers ?? 0) > 0 ||
          s.disconnects > 0
        ) {
          ctx.log(
            'the frontend is saturated, fell behind or lost its connection: not escalating further',
          );
          break;
        }
      }
      let profile: ProfileSummary | null = null;
      if (ctx.profile) {
        ctx.log('profiling the frontend under a 25,000 reports/s flood (node --cpu-prof)');
        await rig.fe.proc.stop();
        const p = await startProfiledFrontend(g, ctx.tmpDir, rig.frontendOptions);
        const prig = { ...rig, fe: p.fe };
        await prewarm(prig);
        profile = await p.finish(() => runStep(prig, 25000, ctx.quick ? 2 : 5, false));
      }
      await rig.flood.quit();
      return summarize(steps, seconds, rig.mon !== null, profile);
    } finally {
      await rig?.bus.close();
      await g.stopAll();
    }
  },
};

const TARGET_RATE = 50000;
const LAG_TARGET = 50;

const RECEIVED = 'sluice_frontend_kv_metrics_received_total';

/** A step passes when the frontend kept up (no backlog left), lag p99 < 50 ms and nothing dropped. */
const passes = (s: Step): boolean =>
  s.catchupMs < 250 &&
  (s.delivered === null || s.received === s.delivered) &&
  (percentile(s.lag, 99) ?? Infinity) < LAG_TARGET &&
  s.lagTimeouts === 0 &&
  s.invalid === 0 &&
  (s.slowConsumers ?? 0) === 0 &&
  s.disconnects === 0;

function summarize(
  steps: Step[],
  seconds: number,
  observed: boolean,
  profile: ProfileSummary | null,
): ScenarioResult {
  const ok = steps.filter(passes);
  const best = ok.length ? Math.max(...ok.map((s) => s.absorbed)) : null;
  const lowest = steps.length ? Math.min(...steps.map((s) => s.rate)) : NaN;
  const peak = Math.max(0, ...steps.map((s) => s.absorbed).filter(Number.isFinite));
  const at50 = steps.find((s) => s.rate === TARGET_RATE);
  const lag50 = at50 ? percentile(at50.lag, 99) : null;
  const single = (
    name: string,
    v: number | null,
    target: string,
    unit: string,
    pass: boolean | null,
  ): Figure => ({
    scenario: 4,
    name,
    target,
    unit,
    median: v,
    min: null,
    max: null,
    verdict: verdict(pass),
  });
  const figures: Figure[] = [
    {
      ...single(
        'Monitor ingest: reports/s absorbed, kept current (lag p99 < 50 ms, none dropped)',
        best,
        '≥ 50,000',
        'reports/s',
        best !== null && best >= TARGET_RATE,
      ),
      note: best === null ? `not even at the lowest rate tried, ${fmt(lowest)}/s` : undefined,
    },
    single(
      'Monitor ingest: report-to-decision lag p99 at 50,000 reports/s offered',
      lag50,
      '< 50 ms',
      'ms',
      lag50 !== null && lag50 < LAG_TARGET,
    ),
    single(
      'Monitor ingest: peak absorbed, whatever the lag',
      peak,
      '(measured)',
      'reports/s',
      null,
    ),
  ];
  const rows = steps.map(
    (s) =>
      `| ${fmt(s.rate)} | ${fmt(s.sent / seconds)} | ${fmt(s.absorbed)} | ${fmt(s.catchupMs)} | ${pct(s.cpu)} | ` +
      `${fmt(percentile(s.lag, 50), 1)} / ${fmt(percentile(s.lag, 99), 1)} (${s.lag.length}${s.lagTimeouts ? `, ${s.lagTimeouts} timed out` : ''}) | ` +
      `${fmt(s.traffic.p99_us === null ? null : s.traffic.p99_us / 1000, 1)} | ${s.invalid} | ${s.slowConsumers ?? '?'} / ${s.disconnects} | ` +
      `${s.delivered === null ? '?' : fmt(s.delivered)} | ${fmt(s.received)} | ${s.pendingMaxBytes === null ? '?' : fmt(s.pendingMaxBytes / 1e6, 1)} | ${passes(s) ? 'yes' : 'no'} |`,
  );
  const details = [
    `${WORKERS.toLocaleString('en-US')} simulated workers × ${RANKS} ranks published by one lightweight process`,
    `(pre-encoded contract §4 reports over ${CONNECTIONS} NATS connections, every rank over the threshold and`,
    'its numbers changing from report to report), paced at each offered rate for',
    `${seconds} s, while an open-loop client sends ${TRAFFIC_RPS} chat requests/s to the same model. Frontend on CPU 0;`,
    `publisher, ${observed ? 'a private nats-server (so its /varz and /connz can be read)' : 'NATS'}, simulated workers and clients on CPU 1.`,
    '',
    '*Absorbed*: at the end of each step every publisher connection sends a sentinel report',
    '(one rank each of a sentinel worker); NATS keeps per-connection order, so the first 503 for the',
    "sentinel's model proves every earlier report was processed. Absorbed = reports sent / time from",
    "the step's start to that 503; *catch-up* = sentinel sent → seen. *Lag*: during the flood the",
    'bench flips one extra worker of the flooded model (the only one not busy) busy and free on its',
    'own connection and probes with a request every 5 ms (at most 16 in flight) until the decision',
    'changes (includes one HTTP round trip); the sentinel is probed the same way. 10 ms pause',
    'between flips. *Dropped*: `dynamo_frontend_kv_metrics_invalid_total`, NATS slow-consumer',
    "events and frontend NATS disconnects; *delivered* is what nats-server wrote to the frontend's",
    'connection, *received* what the frontend counted (`sluice_frontend_kv_metrics_received_total`),',
    'read after the sentinel was seen: a step keeps the state current only if the two are equal.',
    'The offered rate rises step by step until the frontend absorbs less than 80 % of it, ends more',
    'than 20 s behind, or loses reports.',
    '',
    '| offered /s | sent /s | absorbed /s | catch-up ms | frontend CPU | lag p50 / p99 ms (trials) | traffic p99 ms | invalid | slow consumers / disconnects | delivered | received | max pending MB | kept current |',
    '| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...rows,
    '',
    profile ? profileMarkdown('frontend absorbing 25,000 reports/s', profile) : '',
  ].join('\n');
  const analysis: string[] = [];
  if (figures[0].verdict === 'MISS' || figures[1].verdict === 'MISS') {
    const hot = steps.find((s) => s.cpu > 0.9);
    const top = profile
      ? ` Self time by owner under the flood: ${profile.owners
          .slice(0, 6)
          .map((o) => `${o.owner} ${o.selfPct.toFixed(0)} %`)
          .join(', ')}; hottest functions ${profile.functions
          .slice(0, 6)
          .map((f) => `\`${f.name}\` (${f.where}, ${f.selfPct.toFixed(1)} %)`)
          .join(', ')}.`
      : '';
    analysis.push(
      `**Monitor ingest (${best === null ? `not kept current at any rate tried, from ${fmt(lowest)}/s` : `kept current up to ${fmt(best)} reports/s`}, peak ${fmt(peak)}/s absorbed; target ≥ 50,000 with lag p99 < 50 ms).** ` +
        (hot
          ? `From ${fmt(hot.rate)} reports/s offered the frontend's core is saturated (${pct(hot.cpu)} CPU) and reports queue in its NATS socket, ` +
            'so both the absorbed rate and the decision lag are bounded by per-report CPU cost in the frontend (one JSON parse, the Nest ' +
            'microservice dispatch per message, validation, the registry update and four Prometheus gauge updates with label hashing).'
          : 'The frontend did not saturate its core; see the step table.') +
        top +
        ' A counter of reports received/applied (e.g. `dynamo_frontend_kv_metrics_received_total`) would let this be measured directly.',
    );
  }
  return { figures, details, analysis };
}
