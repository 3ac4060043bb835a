import { autocannon, expectOnly } from '../lib/autocannon';
import {
  BenchContext,
  CPU,
  Figure,
  Scenario,
  ScenarioResult,
  verdict,
  warmupS,
  figureOver,
} from '../lib/context';
import { fixedRate, FixedRateResult } from '../lib/fixed-rate';
import { chatBody, httpGet, httpPost } from '../lib/http';
import { startNginx } from '../lib/nginx';
import { metricSamples, pin } from '@sluice/testkit';
import { profileMarkdown, ProfileSummary } from '../lib/profile';
import { startProfiledFrontend } from '../lib/profiled-frontend';
import { CoreMeter, CORE_FULL, CpuMeter } from '../lib/procfs';
import { DECODE_SHEDDING, startFrontend, startWorker } from '../lib/sluice';
import { correlation, fmt, median, pct, rotate, uniqueNamespace, waitFor } from '../lib/util';

const PATH = '/v1/chat/completions';
const FLAGS = DECODE_SHEDDING;
type Subject = 'direct' | 'sluice' | 'nginx';
const SUBJECTS: Subject[] = ['direct', 'sluice', 'nginx'];

/**
 * Scenario 2: Sluice in front of a simulated worker (`--speedup 0`) vs the client talking to the
 * worker directly and vs nginx as a keep-alive reverse proxy to the same worker.
 */
export const admittedScenario: Scenario = {
  id: 2,
  title: 'Admitted path',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const g = ctx.group();
    const ns = uniqueNamespace('s2');
    try {
      const common = { natsUrl: ctx.natsUrl, databaseUrl: ctx.databaseUrl, namespace: ns };
      const worker = await startWorker(
        g,
        ['--speedup', '0', '--nats-url', ctx.natsUrl, '--namespace', ns],
        { cpu: CPU.client },
      );
      const fe = await startFrontend(g, { ...common, cpu: CPU.server, flags: FLAGS });
      const nginx = await startNginx(
        g,
        ctx.tmpDir,
        { kind: 'proxy', upstreamPort: worker.port },
        CPU.server,
      );
      const urls: Record<Subject, string> = {
        direct: worker.url,
        sluice: fe.url,
        nginx: nginx.url,
      };
      const body = chatBody();
      for (const s of SUBJECTS) {
        await waitFor(
          async () => (await httpPost(`${urls[s]}${PATH}`, body)).status === 200,
          `${s} answering 200`,
        );
      }
      // Throughput: whoever the client talks to sits on CPU 0; behind a proxy the worker shares
      // CPU 1 with the client, talking to it directly it takes CPU 0 itself.
      const place = (s: Subject): void =>
        pin(worker.proc.pid, s === 'direct' ? CPU.server : CPU.client);

      const rounds = ctx.quick ? 1 : 5;
      const seconds = ctx.quick ? 1.5 : 5;
      const rps: Record<Subject, number[]> = { direct: [], sluice: [], nginx: [] };
      const feCpu: number[] = [];
      // CPU per request (µs) of the proxy (Sluice, nginx) or of the worker (direct).
      const cpuPer: Record<Subject, number[]> = { direct: [], sluice: [], nginx: [] };
      const workerCpuPer: number[] = [];
      // Each core's busy share during each path's max-rate runs: [CPU 0, CPU 1].
      const cores: Record<Subject, Array<[number, number]>> = { direct: [], sluice: [], nginx: [] };
      const pids: Record<Subject, number> = {
        direct: worker.proc.pid,
        sluice: fe.proc.pid,
        nginx: nginx.proc.pid,
      };
      ctx.log(
        `max throughput: ${rounds} interleaved rounds of ${seconds} s per path, 50 connections`,
      );
      for (const s of SUBJECTS) {
        place(s);
        await autocannon(g, { url: `${urls[s]}${PATH}`, body, durationS: warmupS(ctx.quick, s) });
      }
      for (let r = 0; r < rounds; r++) {
        const line: string[] = [];
        for (const s of rotate(SUBJECTS, r)) {
          place(s);
          const meter = new CpuMeter(pids[s]);
          const wmeter = new CpuMeter(worker.proc.pid);
          const core0 = new CoreMeter(Number(CPU.server));
          const core1 = new CoreMeter(Number(CPU.client));
          const res = await autocannon(g, { url: `${urls[s]}${PATH}`, body, durationS: seconds });
          cores[s].push([core0.read(), core1.read()]);
          expectOnly(res, '200', s);
          rps[s].push(res.rps);
          cpuPer[s].push((meter.usedMs() * 1000) / res.total);
          if (s === 'sluice') {
            feCpu.push(meter.read());
            workerCpuPer.push((wmeter.usedMs() * 1000) / res.total);
          }
          line.push(`${s} ${fmt(res.rps)}`);
        }
        ctx.log(`round ${r + 1}/${rounds}: ${line.join(', ')} req/s`);
      }

      const rate = Math.max(50, Math.round((median(rps.sluice) ?? 100) / 2));
      const lrounds = ctx.quick ? 1 : 5;
      const lseconds = ctx.quick ? 1.5 : 5;
      const lwarmup = ctx.quick ? 0.5 : 2;
      const lat: Record<Subject, FixedRateResult[]> = { direct: [], sluice: [], nginx: [] };
      const clientCpu: number[] = [];
      const fullGcs: FullGcs[] = [];
      ctx.log(
        `latency at a fixed ${rate} req/s (half of Sluice's max): ${lrounds} rounds of ${lseconds} s per path`,
      );
      // Unlike the throughput runs, the worker stays on CPU 1 with the client for every path, so
      // the three differ only in what sits between them: nothing, Sluice or nginx on CPU 0.
      pin(worker.proc.pid, CPU.client);
      for (let r = 0; r < lrounds; r++) {
        const line: string[] = [];
        for (const s of rotate(SUBJECTS, r)) {
          const gcBefore = s === 'sluice' ? await fullGcsOf(fe.url) : null;
          const res = await fixedRate(g, `${urls[s]}${PATH}`, rate, lseconds, body, 64, lwarmup);
          if (gcBefore) fullGcs.push(since(gcBefore, await fullGcsOf(fe.url)));
          if (res.errors > 0 || Object.keys(res.statuses).some((k) => k !== '200')) {
            throw new Error(
              `${s} at ${rate} req/s: ${JSON.stringify(res.statuses)}, ${res.errors} errors`,
            );
          }
          lat[s].push(res);
          clientCpu.push(res.client_cpu_us_per_request);
          line.push(
            `${s} p50 ${fmt((res.p50_us ?? 0) / 1000, 2)} ms p99 ${fmt((res.p99_us ?? 0) / 1000, 2)} ms`,
          );
        }
        ctx.log(`round ${r + 1}/${lrounds}: ${line.join(', ')}`);
      }

      let profile: ProfileSummary | null = null;
      if (ctx.profile) {
        ctx.log('profiling the frontend on the admitted path (node --cpu-prof)');
        await fe.proc.stop();
        place('sluice');
        const p = await startProfiledFrontend(g, ctx.tmpDir, { ...common, flags: FLAGS });
        await waitFor(
          async () => (await httpPost(`${p.fe.url}${PATH}`, body)).status === 200,
          'profiled 200',
        );
        await autocannon(g, { url: `${p.fe.url}${PATH}`, body, durationS: 4 });
        profile = await p.finish(() =>
          autocannon(g, { url: `${p.fe.url}${PATH}`, body, durationS: ctx.quick ? 2 : 5 }),
        );
      }
      return summarize({
        rps,
        feCpu,
        cpuPer,
        workerCpuPer,
        cores,
        rate,
        latWarmupS: lwarmup,
        lat,
        clientCpu,
        fullGcs,
        profile,
      });
    } finally {
      await g.stopAll();
    }
  },
};

const ms = (us: number | null): number => (us ?? NaN) / 1000;

/** A median latency (ms) at a fixed rate from which the requests were queueing on each other. */
const BEHIND_MS = 100;

/** The frontend's full (mark-compact) collections so far: how many, and their pauses in ms. */
interface FullGcs {
  readonly count: number;
  readonly pauseMs: number;
}

/** Read from the frontend's own `/metrics` (prom-client's `nodejs_gc_duration_seconds`). */
async function fullGcsOf(url: string): Promise<FullGcs> {
  const text = (await httpGet(`${url}/metrics`)).text;
  const one = (name: string): number => metricSamples(text, name, { kind: 'major' })[0] ?? 0;
  return {
    count: one('nodejs_gc_duration_seconds_count'),
    pauseMs: 1000 * one('nodejs_gc_duration_seconds_sum'),
  };
}

const since = (a: FullGcs, b: FullGcs): FullGcs => ({
  count: b.count - a.count,
  pauseMs: b.pauseMs - a.pauseMs,
});

/** What the scenario measured, by name: several are lists of numbers of different meanings. */
interface Measured {
  /** Max-rate rounds: each path's req/s. */
  readonly rps: Record<Subject, number[]>;
  /** Max-rate rounds: the frontend process's busy share of one core. */
  readonly feCpu: number[];
  /** Max-rate rounds: CPU µs per request of the proxy (or of the worker, direct). */
  readonly cpuPer: Record<Subject, number[]>;
  /** Max-rate rounds: the worker's CPU µs per request behind Sluice. */
  readonly workerCpuPer: number[];
  /** Max-rate rounds: each core's busy share, [CPU 0, CPU 1]. */
  readonly cores: Record<Subject, Array<[number, number]>>;
  /** The latency rounds' fixed rate (req/s) and warm-up (s). */
  readonly rate: number;
  readonly latWarmupS: number;
  /** Latency rounds: each path's fixed-rate result. */
  readonly lat: Record<Subject, FixedRateResult[]>;
  /** Latency rounds: the client's own CPU µs per request. */
  readonly clientCpu: number[];
  /** Latency rounds: the frontend's full collections in each of its rounds. */
  readonly fullGcs: FullGcs[];
  readonly profile: ProfileSummary | null;
}

function summarize(measured: Measured): ScenarioResult {
  const { rps, feCpu, cpuPer, workerCpuPer, cores, rate, latWarmupS, lat } = measured;
  const { clientCpu, fullGcs, profile } = measured;
  const vsNginx = rps.sluice.map((x, i) => x / rps.nginx[i]);
  const vsDirect = rps.sluice.map((x, i) => x / rps.direct[i]);
  const added = (s: Subject, k: 'p50_us' | 'p99_us'): number[] =>
    lat[s].map((r, i) => ms(r[k]) - ms(lat.direct[i][k]));
  const addedP50 = added('sluice', 'p50_us');
  const addedP99 = added('sluice', 'p99_us');
  const nginxAddedP50 = added('nginx', 'p50_us');
  const nginxAddedP99 = added('nginx', 'p99_us');
  const busy = (s: Subject, core: 0 | 1): number => median(cores[s].map((c) => c[core])) ?? 0;
  const coresLine = (s: Subject, name: string): string =>
    `${name} CPU 0 ${pct(busy(s, 0))}, CPU 1 ${pct(busy(s, 1))}`;
  // nginx's rate was set by CPU 1 (the load generator and the worker) when that core was full.
  const nginxClientBound = busy('nginx', 1) >= CORE_FULL;
  const row = (
    name: string,
    xs: number[],
    target: string,
    unit: string,
    ok: boolean | null = null,
  ): Figure => figureOver(2, name, xs, target, unit, verdict(ok));
  const m = (xs: number[]): number => median(xs) ?? NaN;
  const figures: Figure[] = [
    row(
      `Admitted path: added p50 latency at ${rate} req/s (½ Sluice max)`,
      addedP50,
      '< 1 ms',
      'ms',
      m(addedP50) < 1,
    ),
    row('Admitted path: Sluice / nginx proxy req/s', vsNginx, '≥ 0.7', '×', m(vsNginx) >= 0.7),
    row(
      `Admitted path: added p99 latency at ${rate} req/s`,
      addedP99,
      '< 5 ms',
      'ms',
      m(addedP99) < 5,
    ),
    row('Admitted path: Sluice / direct req/s', vsDirect, '(measured)', '×'),
    row('Admitted path: Sluice max', rps.sluice, '(measured)', 'req/s'),
    row('Admitted path: nginx proxy max', rps.nginx, '(reference)', 'req/s'),
    row('Admitted path: worker direct max', rps.direct, '(reference)', 'req/s'),
  ];
  const tput = rps.sluice
    .map(
      (_, i) =>
        `| ${i + 1} | ${fmt(rps.direct[i])} | ${fmt(rps.sluice[i])} | ${fmt(rps.nginx[i])} | ${vsNginx[i].toFixed(3)} |`,
    )
    .join('\n');
  const latRows = lat.sluice
    .map((_, i) => {
      const c = (s: Subject): string =>
        `${ms(lat[s][i].p50_us).toFixed(2)} / ${ms(lat[s][i].p99_us).toFixed(2)}`;
      const lag = SUBJECTS.map((s) => (lat[s][i].max_send_lag_us / 1000).toFixed(1)).join(' / ');
      const gc = fullGcs[i]
        ? `${fullGcs[i].count}${fullGcs[i].count > 0 ? ` (${fullGcs[i].pauseMs.toFixed(0)} ms)` : ''}`
        : '';
      return `| ${i + 1} | ${c('direct')} | ${c('sluice')} | ${c('nginx')} | ${addedP50[i].toFixed(2)} / ${addedP99[i].toFixed(2)} | ${nginxAddedP50[i].toFixed(2)} / ${nginxAddedP99[i].toFixed(2)} | ${lag} | ${gc} |`;
    })
    .join('\n');
  const details = [
    'Non-streaming chat completion (`max_tokens` 8) answered by one simulated worker with',
    '`--speedup 0`. Three paths, interleaved: the client straight to the worker, through Sluice',
    '(`token-capacity`, decode threshold 0.85), and through nginx (`proxy_pass` with an upstream',
    'keep-alive pool, buffering off). Placement: the process the client talks to runs on CPU 0;',
    'behind a proxy the worker runs on CPU 1 beside the client (moved there with `taskset -p`), and',
    'for the direct runs it is moved to CPU 0. Maximum rate: autocannon, 50 connections, after a',
    'warm-up per path (Sluice 15 s, the others 5 s; in its first 1.5 s under load the frontend',
    'reached ~20 % of its warmed-up rate). Latency:',
    `an open-loop client at a fixed ${rate} req/s (half of Sluice's median maximum), measured`,
    'from each scheduled send time with µs resolution (autocannon only resolves whole ms), after',
    `${latWarmupS} s of the same traffic that is not recorded (the client opening its 64 connections and`,
    'compiling its own code). In the latency runs the worker stays on CPU 1 beside the client for',
    'all three paths, so they differ only in what runs on CPU 0 between the two (nothing, Sluice or',
    "nginx), and nginx added to the same requests is the control. The client sends with undici's",
    `\`dispatch\` (no promise or stream per request): ${fmt(median(clientCpu), 0)} µs of its own CPU per request.`,
    '',
    '| round | direct req/s | Sluice req/s | nginx req/s | Sluice / nginx |',
    '| ---: | ---: | ---: | ---: | ---: |',
    tput,
    '',
    roundSpread(rps),
    '',
    `Frontend CPU during its max-rate runs: ${feCpu.map((c) => pct(c)).join(', ')} of one core. ` +
      `CPU time per request (median over rounds, from /proc): Sluice ${fmt(median(cpuPer.sluice), 0)} µs, ` +
      `nginx ${fmt(median(cpuPer.nginx), 0)} µs, the worker itself ${fmt(median(cpuPer.direct), 0)} µs direct ` +
      `(${fmt(median(workerCpuPer), 0)} µs behind Sluice). ` +
      `Cores busy during each path's max-rate runs (median over rounds; CPU 0 the server, CPU 1 the ` +
      `client and, behind a proxy, the worker): ${coresLine('direct', 'direct')}; ${coresLine('sluice', 'Sluice')}; ` +
      `${coresLine('nginx', 'nginx')}.`,
    '',
    '| round | direct p50 / p99 ms | Sluice p50 / p99 ms | nginx p50 / p99 ms | Sluice added p50 / p99 | nginx added p50 / p99 | client send lag max ms (direct / Sluice / nginx) | Sluice full GCs (pauses) |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    latRows,
    '',
    profile ? profileMarkdown('frontend proxying admitted requests under autocannon', profile) : '',
  ].join('\n');
  const analysis: string[] = [];
  const top = profile
    ? ` Self time by owner: ${profile.owners
        .slice(0, 5)
        .map((o) => `${o.owner} ${o.selfPct.toFixed(0)} %`)
        .join(', ')}; hottest functions ${profile.functions
        .slice(0, 4)
        .map((f) => `\`${f.name}\` (${f.where})`)
        .join(', ')}.`
    : '';
  if (figures[1].verdict === 'MISS') {
    analysis.push(
      `**Admitted throughput (${m(vsNginx).toFixed(2)}× nginx, target ≥ 0.7).** Sluice spends ` +
        `${fmt(median(cpuPer.sluice), 0)} µs of CPU per proxied request (nginx ${fmt(median(cpuPer.nginx), 0)} µs) and runs its core at ` +
        `${pct(median(feCpu) ?? 0)} at ${fmt(m(rps.sluice))} req/s while nginx relays ` +
        `${fmt(m(rps.nginx))} req/s` +
        (nginxClientBound
          ? `, with CPU 1 (the load generator and the worker behind nginx) ${pct(busy('nginx', 1))} busy and ` +
            `CPU 0 ${pct(busy('nginx', 0))}: that core, not nginx, set nginx's rate, so the ratio compares ` +
            "Sluice's own ceiling with the load generator's and the worker's on this machine, and moves with the speed of either core."
          : ` (the worker alone: ${fmt(m(rps.direct))} req/s direct).`) +
        `${top} ` +
        "No single item dominates: socket writes, undici's pool bookkeeping, the collector, Fastify's body parser, " +
        "Nest's router, guard and pipe, and five prom-client updates per request. " +
        "The next large step would be to serve admitted requests outside Nest's pipeline as the 503 already is; " +
        'it is not taken because the guard, the admission policies and the exception filter are the extension points users build on.',
    );
  }
  // A p50 this long at a fixed rate is a standing queue: requests waiting on each other.
  const behind = lat.sluice.flatMap((r, i) => (ms(r.p50_us) >= BEHIND_MS ? [i] : []));
  if (behind.length > 0) {
    const others = lat.direct.filter((_, i) => !behind.includes(i));
    const list = (xs: number[]): string => xs.map((x) => fmt(x, 0)).join(', ');
    analysis.push(
      `**Sluice fell behind the fixed rate in round${behind.length > 1 ? 's' : ''} ` +
        `${behind.map((i) => i + 1).join(', ')}** (p50 ${list(behind.map((i) => ms(lat.sluice[i].p50_us)))} ms): ` +
        `a queue that stood through the round, not a slower path. At those moments the frontend did not serve ${rate} req/s, ` +
        "half the maximum it reached in the throughput rounds. The worker's own p99 straight from the client in the same " +
        `rounds: ${list(behind.map((i) => ms(lat.direct[i].p99_us)))} ms` +
        (others.length > 0
          ? ` (the other rounds: ${list(others.map((r) => ms(r.p99_us)))} ms)`
          : '') +
        '. The added latencies of those rounds measure the queue.',
    );
  }
  if (figures[0].verdict === 'MISS') {
    analysis.push(
      `**Added p50 latency (${m(addedP50).toFixed(2)} ms at ${rate} req/s, target < 1 ms).** Sluice's own CPU per ` +
        `request is ~${fmt(median(cpuPer.sluice), 0)} µs, which at ${rate} req/s keeps its single event loop ` +
        `~${fmt((rate * (median(cpuPer.sluice) ?? 0)) / 1e4, 0)} % busy: a request mostly waits for the loop to finish ` +
        "other requests' work (and, under a proxy, the worker shares its core with the client). nginx, at " +
        `${fmt(median(cpuPer.nginx), 0)} µs per request, adds ${m(nginxAddedP50).toFixed(2)} ms at the same rate.`,
    );
  }
  if (figures[2].verdict === 'MISS') {
    analysis.push(
      `**Added p99 latency (${m(addedP99).toFixed(1)} ms at ${rate} req/s, target < 5 ms).** The p99 of ` +
        'requests through Sluice minus the p99 of the same requests sent straight to the worker, round by ' +
        `round (table above; nginx, the control, adds ${m(nginxAddedP99).toFixed(1)} ms at its p99). The worker ` +
        'and the client share CPU 1 on every path, so the direct p99 carries the same scheduling tail as the ' +
        "proxied ones; what is left is the frontend's own: at half its maximum rate its one event loop is " +
        'about half busy, so a request that arrives during a longer turn (a GC pause, a burst of other ' +
        'requests, a scrape of /metrics) waits for it.' +
        gcNote(fullGcs, addedP99),
    );
  }
  return { figures, details, analysis };
}

/**
 * How the proxies' rounds moved with the worker's own (direct) rate: Sluice's maximum rate
 * swings from round to round (0.53-0.95x nginx within one run of record), nginx's much less.
 */
function roundSpread(rps: Record<Subject, number[]>): string {
  if (rps.direct.length < 3) return '';
  const sluice = correlation(rps.direct, rps.sluice);
  const nginx = correlation(rps.direct, rps.nginx);
  const tracks = sluice !== null && nginx !== null && sluice >= 0.7 && Math.abs(nginx) < 0.5;
  return (
    `Over the ${rps.direct.length} rounds, the correlation of each proxy's rate with the direct path's ` +
    `(the worker alone, a Node process like Sluice): Sluice r = ${fmt(sluice, 2)}, nginx r = ${fmt(nginx, 2)}.` +
    (tracks
      ? ' Sluice rose and fell with the worker while nginx did not: much of the spread between rounds ' +
        'is the machine running Node processes faster or slower from one round to the next.'
      : '')
  );
}

/**
 * Which rounds a full collection fell into (the frontend's own count, read before and after each
 * of its latency rounds), and what those rounds added at the p99 against the others.
 */
function gcNote(fullGcs: FullGcs[], addedP99: number[]): string {
  const hit = fullGcs.map((g, i) => (g.count > 0 ? i : -1)).filter((i) => i >= 0);
  if (hit.length === 0) return ' No full collection of the frontend fell into a latency round.';
  const others = addedP99.filter((_, i) => !hit.includes(i));
  const pauses = hit.map((i) => fullGcs[i].pauseMs.toFixed(0)).join(', ');
  return (
    ` A full collection of the frontend (mark-compact) fell into ${hit.length} of the ` +
    `${fullGcs.length} rounds (${hit.map((i) => i + 1).join(', ')}; pauses ${pauses} ms in all), ` +
    `which added ${hit.map((i) => addedP99[i].toFixed(1)).join(', ')} ms at the p99` +
    (others.length > 0 ? `, against ${median(others)?.toFixed(1)} ms (median) in the others.` : '.')
  );
}
