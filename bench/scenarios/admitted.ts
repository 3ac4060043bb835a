import { pin, Started } from '@sluice/testkit';
import { autocannon, expectOnly } from '../lib/autocannon';
import { BenchContext, BenchGroup, CPU } from '../lib/context';
import { expectStatus, fixedRate, FixedRateResult } from '../lib/fixed-rate';
import { chatBody, httpPost } from '../lib/http';
import { startNginx } from '../lib/nginx';
import { describeProcess, requireLikeForLike } from '../lib/processes';
import {
  atLeast,
  below,
  figure,
  interleaved,
  Plan,
  Scenario,
  ScenarioResult,
} from '../lib/scenario';
import {
  DECODE_SHEDDING,
  dropDatabase,
  startFrontend,
  startFrontendWithTenants,
  startWorker,
  tenantsDatabase,
} from '../lib/sluice';
import { fmt, median, uniqueNamespace, waitFor } from '../lib/util';

const PATH = '/v1/chat/completions';
const SUBJECTS = ['direct', 'sluice', 'tenants', 'nginx'] as const;
type Subject = (typeof SUBJECTS)[number];
type PerSubject<T> = Record<Subject, T[]>;
const perSubject = <T>(): PerSubject<T> => ({ direct: [], sluice: [], tenants: [], nginx: [] });

/**
 * Seconds: warm-up and round of the maximum rate, warm-up and round of the latency runs. Quick (a
 * smoke test, not figures of record) skips the maximum rate's warm-up.
 */
const timing = (quick: boolean) =>
  quick
    ? { warmS: 0, seconds: 1, latWarmS: 0.5, latSeconds: 1 }
    : { warmS: 10, seconds: 5, latWarmS: 2, latSeconds: 5 };

interface Paths {
  url: Record<Subject, string>;
  headers: Record<Subject, Record<string, string>>;
  /** The worker behind each path (Sluice with tenants has its own, in its own namespace). */
  workerPid: Record<Subject, number>;
}

/**
 * One simulated worker answering at once (`--speedup 0`), reached three ways: straight, through
 * Sluice and through nginx as a keep-alive reverse proxy; and Sluice with tenants in front of an
 * equal worker of its own. Maximum rate, then latency at a fixed rate of half Sluice's maximum,
 * each in interleaved rounds.
 */
export const admittedScenario: Scenario = {
  id: 'admitted',
  title: 'Admitted path',
  plan: (quick) => (quick ? { rounds: 2, seconds: 30 } : { rounds: 5, seconds: 240 }),
  async run(ctx: BenchContext, plan: Plan): Promise<ScenarioResult> {
    const g = ctx.group();
    try {
      const ns = uniqueNamespace('admitted');
      const tenantNs = uniqueNamespace('admitted-tenants');
      const workerIn = (namespace: string): Promise<Started> =>
        startWorker(g, ['--speedup', '0', '--nats-url', ctx.natsUrl, '--namespace', namespace], {
          cpu: CPU.client,
        });
      const options = (namespace: string) => ({
        ...{ natsUrl: ctx.natsUrl, databaseUrl: ctx.databaseUrl, namespace },
        ...{ cpu: CPU.server, flags: DECODE_SHEDDING },
      });
      const [worker, tenantWorker, fe, withTenants] = await Promise.all([
        workerIn(ns),
        workerIn(tenantNs),
        startFrontend(g, options(ns)),
        startFrontendWithTenants(g, options(tenantNs)),
      ]);
      const nginx = await startNginx(
        g,
        ctx.tmpDir,
        { kind: 'proxy', upstreamPort: worker.port },
        CPU.server,
      );
      const w = worker.proc.pid;
      const paths: Paths = {
        url: { direct: worker.url, sluice: fe.url, tenants: withTenants.fe.url, nginx: nginx.url },
        headers: {
          ...{ direct: {}, sluice: {}, nginx: {} },
          tenants: { authorization: `Bearer ${withTenants.key}` },
        },
        workerPid: { direct: w, sluice: w, tenants: tenantWorker.proc.pid, nginx: w },
      };
      for (const s of SUBJECTS)
        await waitFor(
          async () =>
            (await httpPost(`${paths.url[s]}${PATH}`, chatBody(), paths.headers[s])).status === 200,
          `${s} answering 200`,
        );
      const keyless = await httpPost(`${withTenants.fe.url}${PATH}`, chatBody());
      if (keyless.status !== 401) throw new Error(`no key, with tenants: ${keyless.status}`);
      const processes = [
        describeProcess('Sluice frontend', fe.proc.pid),
        describeProcess('Sluice frontend with tenants', withTenants.fe.proc.pid),
        describeProcess('nginx proxy', nginx.proc.pid),
      ];
      requireLikeForLike(processes);
      processes.push(describeProcess('simulated worker', w));
      processes.push(describeProcess('simulated worker (with tenants)', tenantWorker.proc.pid));
      const rps = await maxRates(ctx, g, plan, paths);
      const rate = Math.max(50, Math.round(median(rps.sluice) / 2));
      const lat = await latencies(ctx, g, plan, paths, rate);
      return summarize(rps, lat, rate, processes, ctx.quick);
    } finally {
      await g.stopAll();
      await dropDatabase(tenantsDatabase(ctx.databaseUrl));
    }
  },
};

/** Maximum rates: the process the client talks to on CPU 0; behind a proxy the worker on CPU 1. */
async function maxRates(
  ctx: BenchContext,
  g: BenchGroup,
  plan: Plan,
  paths: Paths,
): Promise<PerSubject<number>> {
  const { warmS, seconds } = timing(ctx.quick);
  const body = chatBody();
  const run = async (s: Subject, durationS: number): Promise<number> => {
    pin(paths.workerPid[s], s === 'direct' ? CPU.server : CPU.client);
    const res = await autocannon(g, {
      ...{ url: `${paths.url[s]}${PATH}`, body, durationS },
      headers: paths.headers[s],
    });
    expectOnly(res, '200', s);
    return res.rps;
  };
  const warm = warmS > 0 ? `warm-up ${warmS} s each` : 'no warm-up';
  ctx.log(`maximum rate: ${warm}, ${plan.rounds} rounds of ${seconds} s per path`);
  if (warmS > 0) for (const s of SUBJECTS) await run(s, warmS);
  const rps = perSubject<number>();
  await interleaved(plan.rounds, SUBJECTS, async (s) => {
    rps[s].push(await run(s, seconds));
    ctx.log(`${s}: ${fmt(rps[s].at(-1))} req/s`);
  });
  return rps;
}

/** Latency at a fixed rate, the worker on CPU 1 for every path: they differ only on CPU 0. */
async function latencies(
  ctx: BenchContext,
  g: BenchGroup,
  plan: Plan,
  paths: Paths,
  rate: number,
): Promise<PerSubject<FixedRateResult>> {
  const { latWarmS: warmupS, latSeconds: durationS } = timing(ctx.quick);
  for (const s of SUBJECTS) pin(paths.workerPid[s], CPU.client);
  ctx.log(
    `latency at ${rate} req/s (half Sluice's maximum): ${plan.rounds} rounds of ${durationS} s`,
  );
  const lat = perSubject<FixedRateResult>();
  const body = chatBody();
  await interleaved(plan.rounds, SUBJECTS, async (s) => {
    const r = await fixedRate(g, {
      ...{ url: `${paths.url[s]}${PATH}`, rate, durationS, body, warmupS },
      headers: paths.headers[s],
    });
    expectStatus(r, '200', `${s} at ${rate} req/s`);
    lat[s].push(r);
    ctx.log(
      `${s}: p50 ${fmt((r.p50_us ?? NaN) / 1000, 2)} ms, p99 ${fmt((r.p99_us ?? NaN) / 1000, 2)} ms`,
    );
  });
  return lat;
}

const ms = (us: number | null): number => (us ?? NaN) / 1000;

function summarize(
  rps: PerSubject<number>,
  lat: PerSubject<FixedRateResult>,
  rate: number,
  processes: ScenarioResult['processes'],
  quick: boolean,
): ScenarioResult {
  const added = (s: Subject, k: 'p50_us' | 'p99_us'): number[] =>
    lat[s].map((r, i) => ms(r[k]) - ms(lat.direct[i][k]));
  const vsNginx = rps.sluice.map((x, i) => x / rps.nginx[i]);
  const tenantsVsSluice = rps.tenants.map((x, i) => x / rps.sluice[i]);
  const figures = [
    figure('Sluice ÷ nginx, proxied requests per second', '×', vsNginx, atLeast(0.7)),
    figure(
      `Latency Sluice adds at ${fmt(rate)} req/s, p50`,
      'ms',
      added('sluice', 'p50_us'),
      below(1),
    ),
    figure(
      `Latency Sluice adds at ${fmt(rate)} req/s, p99`,
      'ms',
      added('sluice', 'p99_us'),
      below(5),
    ),
    figure('Sluice with tenants ÷ Sluice, proxied requests per second', '×', tenantsVsSluice),
    figure(
      `Latency Sluice with tenants adds at ${fmt(rate)} req/s, p50`,
      'ms',
      added('tenants', 'p50_us'),
    ),
    figure(
      `Latency Sluice with tenants adds at ${fmt(rate)} req/s, p99`,
      'ms',
      added('tenants', 'p99_us'),
    ),
    figure(`Latency nginx adds at ${fmt(rate)} req/s, p50`, 'ms', added('nginx', 'p50_us')),
    figure(`Latency nginx adds at ${fmt(rate)} req/s, p99`, 'ms', added('nginx', 'p99_us')),
    figure('Sluice, proxied requests per second', 'req/s', rps.sluice),
    figure('Sluice with tenants, proxied requests per second', 'req/s', rps.tenants),
    figure('nginx, proxied requests per second', 'req/s', rps.nginx),
    figure('Worker alone, requests per second', 'req/s', rps.direct),
  ];
  const t = timing(quick);
  const tput = vsNginx.map(
    (r, i) =>
      `| ${i + 1} | ${SUBJECTS.map((s) => fmt(rps[s][i])).join(' | ')} | ${r.toFixed(3)} | ${tenantsVsSluice[i].toFixed(3)} |`,
  );
  const cell = (r: FixedRateResult): string =>
    `${ms(r.p50_us).toFixed(2)} / ${ms(r.p99_us).toFixed(2)}`;
  const latRows = lat.direct.map(
    (_, i) => `| ${i + 1} | ${SUBJECTS.map((s) => cell(lat[s][i])).join(' | ')} |`,
  );
  const details = [
    'A non-streaming chat completion (`max_tokens` 8) answered at once by one simulated worker',
    '(`--speedup 0`), reached three ways: the client straight to the worker, through Sluice',
    '(`token-capacity`, decode threshold 0.85) and through nginx (`proxy_pass` to an upstream',
    `keep-alive pool, buffering off). *Maximum rate*: autocannon, 50 connections, ${t.warmS} s of`,
    `warm-up per path, then ${t.seconds} s per path per round; the process the client talks to runs on`,
    'CPU 0, and behind a proxy the worker runs on CPU 1 beside the client. *Latency*: an open-loop',
    `client (bench/tools/fixed-rate, undici, 64 connections) at ${fmt(rate)} req/s, half Sluice's median`,
    `maximum, timed from each scheduled send with µs resolution, after ${t.latWarmS} s unrecorded, for ${t.latSeconds} s; the`,
    'worker stays on CPU 1 for every path, so the three differ only in what runs on CPU 0 (nothing,',
    "Sluice or nginx). *Added* latency: a path's percentile minus the direct path's in the same round.",
    '*Sluice with tenants*: the same frontend plus `--require-tenant`, on a database of its own',
    'holding three tenants created through `/tenants` (weights 3, 1, 1, each with a key and limits',
    "far above the load), loaded with the first tenant's key (without a key: 401, checked), in",
    'front of an equal worker of its own in its own namespace, placed and loaded as Sluice.',
    '',
    '| round | worker alone req/s | Sluice req/s | Sluice with tenants req/s | nginx req/s | Sluice ÷ nginx | with tenants ÷ Sluice |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...tput,
    '',
    '| round | direct p50 / p99 ms | Sluice p50 / p99 ms | with tenants p50 / p99 ms | nginx p50 / p99 ms |',
    '| ---: | ---: | ---: | ---: | ---: |',
    ...latRows,
  ].join('\n');
  return { figures, details, processes };
}
