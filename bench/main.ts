/**
 * `npm run bench [-- --quick] [-- --only a,b] [-- --node-flags "FLAGS"] [-- --out FILE]`: runs the
 * scenarios of bench/scenarios/index.ts on this machine and writes docs/benchmarks.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { connect } from 'nats';
import { Client } from 'pg';
import { hasTaskset, pin, ROOT, stopEverything } from '@sluice/testkit';
import { BenchContext, BenchGroup, CPU } from './lib/context';
import { NGINX_INSTALL_HINT, nginxBinary } from './lib/nginx';
import { ForeignLoadMonitor, machineInfo } from './lib/procfs';
import { renderReport, ScenarioOutcome } from './lib/report';
import { Scenario, verdict } from './lib/scenario';
import { createDatabase, dropDatabase, tenantsDatabase } from './lib/sluice';
import { SCENARIOS } from './scenarios';

interface Args {
  quick: boolean;
  only: string[] | null;
  out: string | null;
  nodeFlags: string[];
}

const USAGE = `usage: npm run bench -- [--quick] [--only ${SCENARIOS.map((s) => s.id).join(',')}] [--node-flags "FLAGS"] [--out FILE]
  --quick       every scenario with short rounds (a smoke test); the report goes to a temp file unless --out
  --only LIST   only these scenarios; the report goes to a temp file unless --out
  --node-flags  Node flags for every server the bench starts (Sluice's apps, bare Fastify, the
                engine farm), to measure a runtime setting on every side alike
  --out FILE    where to write the report (default docs/benchmarks.md, for a full run)`;

function parseArgs(argv: string[]): Args {
  const a: Args = { quick: false, only: null, out: null, nodeFlags: [] };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = (): string => inline ?? argv[++i] ?? '';
    if (flag === '--quick') a.quick = true;
    else if (flag === '--only') a.only = value().split(',');
    else if (flag === '--out') a.out = value();
    else if (flag === '--node-flags') a.nodeFlags = value().split(/\s+/).filter(Boolean);
    else if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else fail(`unknown argument '${argv[i]}'\n${USAGE}`);
  }
  const unknown = (a.only ?? []).filter((id) => !SCENARIOS.some((s) => s.id === id));
  if (unknown.length) fail(`unknown scenario(s) ${unknown.join(', ')}\n${USAGE}`);
  return a;
}

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const started = Date.now();
/** What is measured: the checkout as the run begins (the sources may change while it runs). */
const code = codeVersion();
const log = (msg: string): void =>
  console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${msg}`);

async function preflight(natsUrl: string): Promise<void> {
  if (!nginxBinary()) fail(NGINX_INSTALL_HINT);
  if (!hasTaskset()) log('warning: taskset not found (util-linux): nothing will be pinned');
  try {
    await (await connect({ servers: natsUrl, timeout: 3000 })).close();
  } catch (err) {
    fail(`NATS is not reachable at ${natsUrl} (${String(err)})`);
  }
  const pg = new Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres' });
  try {
    await pg.connect();
    await pg.end();
  } catch (err) {
    fail(`PostgreSQL is not reachable at 127.0.0.1:5432 as postgres (${String(err)})`);
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const natsUrl = process.env.SLUICE_BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
  await preflight(natsUrl);
  pin(process.pid, CPU.client);
  const tmpDir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  const logDir = join(tmpDir, 'logs');
  mkdirSync(logDir);
  const foreign = new ForeignLoadMonitor();
  foreign.start();
  const dbName = `sluice_bench_${process.pid}`;
  const stop = (sig: NodeJS.Signals): void => {
    log(`${sig}: stopping every process the bench started`);
    void stopEverything()
      .then(() => dropDatabase(dbName))
      .then(() => dropDatabase(tenantsDatabase(`postgres:///${dbName}`)))
      .catch(() => undefined)
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  const selected = SCENARIOS.filter((s) => !args.only || args.only.includes(s.id));
  const planned = selected.reduce((sum, s) => sum + s.plan(args.quick).seconds, 0);
  log(
    `Sluice bench${args.quick ? ' (quick)' : ''}: ${selected.map((s) => s.id).join(', ')}; ` +
      `planned ${(planned / 60).toFixed(1)} min on an idle machine; logs in ${logDir}`,
  );
  const ctx: BenchContext = {
    quick: args.quick,
    natsUrl,
    databaseUrl: await createDatabase(new BenchGroup(logDir, args.nodeFlags), dbName),
    tmpDir,
    nodeFlags: args.nodeFlags,
    foreign,
    log: (m) => log(`  ${m}`),
    group: () => new BenchGroup(logDir, args.nodeFlags),
  };
  const outcomes: ScenarioOutcome[] = [];
  try {
    for (const s of selected) outcomes.push(await runScenario(ctx, s));
  } finally {
    await stopEverything();
    await dropDatabase(dbName).catch(() => undefined);
  }
  foreign.stop();
  writeReport(args, ctx, outcomes);
}

async function runScenario(ctx: BenchContext, s: Scenario): Promise<ScenarioOutcome> {
  const plan = s.plan(ctx.quick);
  log(`${s.id}: ${s.title} (${plan.rounds} rounds, planned ${plan.seconds} s)`);
  const t0 = Date.now();
  let result: ScenarioOutcome['result'] = null;
  let error: string | null = null;
  try {
    result = await s.run(ctx, plan);
    for (const f of result.figures)
      log(
        `  => ${f.name}: ${f.rounds.map((x) => x.toPrecision(3)).join(', ')} ${f.unit} ${verdict(f) ?? ''}`,
      );
  } catch (err) {
    error = err instanceof Error ? (err.stack ?? err.message) : String(err);
    log(`  ${s.id} FAILED: ${error}`);
  }
  await stopEverything();
  const t1 = Date.now();
  return {
    id: s.id,
    title: s.title,
    result,
    error,
    runtimeS: (t1 - t0) / 1000,
    plannedS: plan.seconds,
    foreign: ctx.foreign.between(t0, t1),
  };
}

function writeReport(args: Args, ctx: BenchContext, outcomes: ScenarioOutcome[]): void {
  // Only a full run of every scenario replaces the report of record.
  const out =
    args.out ??
    (args.only || args.quick
      ? join(ctx.tmpDir, 'benchmarks.md')
      : join(ROOT, 'docs', 'benchmarks.md'));
  const argv = process.argv.slice(2);
  const md = renderReport(
    {
      command: `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`,
      code,
      startedAt: new Date(started),
      runtimeS: (Date.now() - started) / 1000,
      machine: machineInfo(),
      quick: args.quick,
      nodeFlags: args.nodeFlags,
      foreign: ctx.foreign.between(started, Date.now()),
    },
    outcomes,
  );
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, md);
  const plots = outcomes.flatMap((o) => o.result?.plots ?? []);
  if (plots.length) mkdirSync(join(dirname(out), 'bench'), { recursive: true });
  for (const p of plots) writeFileSync(join(dirname(out), 'bench', `${p.name}.svg`), p.svg);
  const figures = outcomes.flatMap((o) => o.result?.figures ?? []);
  const count = (v: string): number => figures.filter((f) => verdict(f) === v).length;
  log(`report written to ${relative(ROOT, out).startsWith('..') ? out : relative(ROOT, out)}`);
  log(
    `done in ${((Date.now() - started) / 60000).toFixed(1)} min: ${count('met')} met, ${count('straddles')} straddle, ` +
      `${count('missed')} missed, ${outcomes.filter((o) => o.error).length} scenario(s) failed`,
  );
}

main().catch(async (err) => {
  console.error(err);
  await stopEverything();
  process.exit(1);
});

/**
 * `git describe --always --dirty` of the checkout: `c812c82`, or `c812c82 (with uncommitted
 * changes)`.
 */
function codeVersion(): string {
  try {
    return execFileSync('git', ['describe', '--always', '--dirty'], { cwd: ROOT, encoding: 'utf8' })
      .trim()
      .replace(/-dirty$/, ' (with uncommitted changes)');
  } catch {
    return 'unknown (not a git checkout)';
  }
}
