import { autocannon, expectOnly } from '../lib/autocannon';
import { Heartbeat, ReportBus } from '../lib/bus';
import { BenchContext, BenchGroup, CPU } from '../lib/context';
import { chatBody, httpPost, isOverload, OVERLOAD_BODY } from '../lib/http';
import { startNginx } from '../lib/nginx';
import { describeProcess, requireLikeForLike } from '../lib/processes';
import { CpuMeter } from '../lib/procfs';
import { atLeast, figure, interleaved, Plan, Scenario, ScenarioResult } from '../lib/scenario';
import {
  dropDatabase,
  DECODE_SHEDDING,
  startFrontend,
  startFrontendWithTenants,
  tenantsDatabase,
} from '../lib/sluice';
import { fmt, freePort, uniqueNamespace, waitFor } from '../lib/util';

const PATH = '/v1/chat/completions';
const SUBJECTS = ['sluice', 'tenants', 'fastify', 'nginx'] as const;
type Subject = (typeof SUBJECTS)[number];
const NAMES: Record<Subject, string> = {
  sluice: 'Sluice',
  tenants: 'Sluice with tenants',
  fastify: 'bare Fastify',
  nginx: 'nginx `return 503`',
};

/** Throws unless the server answers the overload 503 exactly as Sluice does. */
async function checkSame503(
  name: string,
  base: string,
  headers: Record<string, string>,
): Promise<void> {
  const a = await httpPost(`${base}${PATH}`, chatBody(), headers);
  const ct = String(a.headers['content-type']);
  if (
    a.status !== 503 ||
    a.text !== OVERLOAD_BODY ||
    a.headers['retry-after'] !== '1' ||
    ct !== 'application/json'
  )
    throw new Error(`${name} does not answer the overload 503: ${a.status} ${ct} ${a.text}`);
}

async function startBareFastify(g: BenchGroup): Promise<{ pid: number; url: string }> {
  const port = await freePort();
  const proc = g.server('bare-fastify', 'servers/bare-fastify.js', [String(port)], {
    cpu: CPU.server,
  });
  await proc.waitForOutput(/listening/);
  return { pid: proc.pid, url: `http://127.0.0.1:${port}` };
}

/**
 * Requests/s of Sluice answering 503 (every worker of the model busy) against a bare Fastify
 * app answering the same 503 and nginx's `return 503` as the machine's ceiling; and Sluice with
 * tenants (`--require-tenant`, the client sending a tenant's key) against plain Sluice.
 */
export const rejectionScenario: Scenario = {
  id: 'rejection',
  title: 'Rejection path',
  plan: (quick) => (quick ? { rounds: 2, seconds: 15 } : { rounds: 5, seconds: 130 }),
  async run(ctx: BenchContext, plan: Plan): Promise<ScenarioResult> {
    const g = ctx.group();
    // Each frontend in a namespace of its own, with its only worker reported busy.
    const bus = await ReportBus.connect(ctx.natsUrl, uniqueNamespace('rejection'));
    const tenantBus = await ReportBus.connect(ctx.natsUrl, uniqueNamespace('rejection-tenants'));
    const hbs = [new Heartbeat(bus), new Heartbeat(tenantBus)];
    try {
      const options = (namespace: string) => ({
        ...{ natsUrl: ctx.natsUrl, databaseUrl: ctx.databaseUrl, namespace },
        ...{ cpu: CPU.server, flags: DECODE_SHEDDING },
      });
      const [fe, withTenants] = await Promise.all([
        startFrontend(g, options(bus.namespace)),
        startFrontendWithTenants(g, options(tenantBus.namespace)),
      ]);
      for (const hb of hbs)
        hb.set({ worker_id: 'busy-1', endpoint: 'http://127.0.0.1:9', active_decode_blocks: 95 });
      const headers: Record<Subject, Record<string, string>> = {
        sluice: {},
        tenants: { authorization: `Bearer ${withTenants.key}` },
        fastify: {},
        nginx: {},
      };
      for (const [s, base] of [
        ['sluice', fe.url],
        ['tenants', withTenants.fe.url],
      ] as const)
        await waitFor(async () => {
          const a = await httpPost(`${base}${PATH}`, chatBody(), headers[s]);
          return isOverload(a.status, a.text);
        }, `${NAMES[s]} answering 503`);
      const keyless = await httpPost(`${withTenants.fe.url}${PATH}`, chatBody());
      if (keyless.status !== 401) throw new Error(`no key, with tenants: ${keyless.status}`);
      const fastify = await startBareFastify(g);
      const nginx = await startNginx(g, ctx.tmpDir, { kind: 'return503' }, CPU.server);
      const url: Record<Subject, string> = {
        sluice: fe.url,
        tenants: withTenants.fe.url,
        fastify: fastify.url,
        nginx: nginx.url,
      };
      const pid: Record<Subject, number> = {
        sluice: fe.proc.pid,
        tenants: withTenants.fe.proc.pid,
        fastify: fastify.pid,
        nginx: nginx.proc.pid,
      };
      for (const s of SUBJECTS) await checkSame503(s, url[s], headers[s]);
      const processes = SUBJECTS.map((s) => describeProcess(NAMES[s], pid[s]));
      requireLikeForLike(processes);

      // Quick (a smoke test, not figures of record) skips the warm-up.
      const [warmS, seconds] = ctx.quick ? [0, 1] : [10, 5];
      const body = chatBody();
      const load = (s: Subject, durationS: number) =>
        autocannon(g, { url: `${url[s]}${PATH}`, body, durationS, headers: headers[s] });
      const warm = warmS > 0 ? `warm-up ${warmS} s each, then` : 'no warm-up,';
      ctx.log(`${warm} ${plan.rounds} rounds of ${seconds} s per server`);
      if (warmS > 0) for (const s of SUBJECTS) await load(s, warmS);
      const rps: Record<Subject, number[]> = { sluice: [], tenants: [], fastify: [], nginx: [] };
      const cpuUs: Record<Subject, number[]> = { sluice: [], tenants: [], fastify: [], nginx: [] };
      await interleaved(plan.rounds, SUBJECTS, async (s) => {
        const meter = new CpuMeter(pid[s]);
        const res = await load(s, seconds);
        expectOnly(res, '503', s);
        rps[s].push(res.rps);
        cpuUs[s].push((meter.usedMs() * 1000) / res.total);
        ctx.log(`${s}: ${fmt(res.rps)} req/s`);
      });
      return summarize(rps, cpuUs, processes, { warmS, seconds });
    } finally {
      for (const hb of hbs) hb.stop();
      await bus.close();
      await tenantBus.close();
      await g.stopAll();
      await dropDatabase(tenantsDatabase(ctx.databaseUrl));
    }
  },
};

function summarize(
  rps: Record<Subject, number[]>,
  cpuUs: Record<Subject, number[]>,
  processes: ScenarioResult['processes'],
  run: { warmS: number; seconds: number },
): ScenarioResult {
  const ratio = rps.sluice.map((x, i) => x / rps.fastify[i]);
  const cpuRatio = cpuUs.sluice.map((x, i) => x / cpuUs.fastify[i]);
  const tenantRatio = rps.tenants.map((x, i) => x / rps.sluice[i]);
  const tenantCpuRatio = cpuUs.tenants.map((x, i) => x / cpuUs.sluice[i]);
  const figures = [
    figure('Sluice ÷ bare Fastify, 503s per second', '×', ratio, atLeast(1)),
    figure('Sluice ÷ bare Fastify, CPU time per 503', '×', cpuRatio),
    figure('Sluice with tenants ÷ Sluice, 503s per second', '×', tenantRatio),
    figure('Sluice with tenants ÷ Sluice, CPU time per 503', '×', tenantCpuRatio),
    ...SUBJECTS.map((s) => figure(`${NAMES[s]}, 503s per second`, 'req/s', rps[s])),
  ];
  const rows = ratio.map(
    (r, i) =>
      `| ${i + 1} | ${SUBJECTS.map((s) => `${fmt(rps[s][i])} (${fmt(cpuUs[s][i])} µs)`).join(' | ')} | ${r.toFixed(3)} | ${tenantRatio[i].toFixed(3)} |`,
  );
  const details = [
    'Sluice (`--admission-control token-capacity --active-decode-blocks-threshold 0.85`, the only',
    "worker of the model reported over the threshold) against a bare Fastify app and nginx's",
    '`return 503`, all answering the same 503 (status, `Retry-After: 1`, `Content-Type`, body:',
    'checked before measuring). *Sluice with tenants*: the same frontend plus `--require-tenant`,',
    'on a database of its own holding three tenants created through `/tenants` (weights 3, 1, 1,',
    "each with a key and limits far above the load), loaded with the first tenant's key; without",
    'a key it answers 401 (checked). Each frontend in a namespace of its own, its only worker',
    'reported busy. Each server on CPU 0, loaded by autocannon (50 connections, a chat body) on',
    `CPU 1: ${run.warmS} s of warm-up each, then ${run.seconds} s per server per round. CPU time per 503`,
    "is the server's own (user + system, its child processes included, from `/proc`) over the",
    'round.',
    '',
    '| round | Sluice req/s (CPU per 503) | Sluice with tenants | bare Fastify | nginx | Sluice ÷ Fastify | with tenants ÷ Sluice |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
  return { figures, details, processes };
}
