/**
 * `npm run bench [-- --quick] [-- --only 1,5] [-- --no-profile] [-- --out FILE]`: runs the
 * benchmark scenarios of issue 5 on this machine and writes docs/benchmarks.md with the plots.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { connect } from 'nats';
import { Client } from 'pg';
import { BenchContext, CPU, Scenario } from './lib/context';
import { NGINX_INSTALL_HINT, nginxBinary } from './lib/nginx';
import { hasTaskset, pin, ProcessGroup, ROOT, stopEverything } from '@sluice/testkit';
import { ForeignLoadMonitor, machineInfo } from './lib/procfs';
import { renderReport, ScenarioOutcome } from './lib/report';
import { comparisonRuntime } from './lib/runtimes';
import { createDatabase, dropDatabase } from './lib/sluice';
import { SCENARIOS } from './scenarios';

interface Args {
  quick: boolean;
  only: number[] | null;
  /** null: profile in full runs only. */
  profile: boolean | null;
  out: string | null;
  shedding: string[];
  /** Scenario 7's objective policy beside `--ttft-slo-ms`; null: DEFAULT_OBJECTIVE. */
  objective: string[] | null;
  /** Scenario 10's second Node; null: the first other `node` on PATH. */
  compareNode: string | null;
}

/**
 * Scenario 7's shedding-on configuration of record: the decode threshold of issue 5, plus a
 * prefill threshold of one step's budget (without it, prompts queued in the engines, which hold
 * no KV blocks yet, are invisible to shedding and TTFT grows without bound).
 */
export const DEFAULT_SHEDDING = [
  '--active-decode-blocks-threshold',
  '0.85',
  '--active-prefill-tokens-threshold-frac',
  '1',
];

/**
 * Scenario 7's TTFT-objective policy: the flags its frontend runs with beside `--ttft-slo-ms`
 * (docs/benchmarks.md, scenario 7: on top of the thresholds of record, measured better than alone).
 */
export const defaultObjective = (shedding: string[]): string[] => [
  '--admission-control',
  'token-capacity',
  ...shedding,
];

const USAGE = `usage: npm run bench -- [--quick] [--only 1,2,...] [--no-profile] [--out FILE] [--compare-node PATH]
  --quick       every scenario, shrunk to run in under 3 minutes (development, smoke test);
                the report then goes to a temp file unless --out
  --only LIST   run only these scenarios (1-12); the report then goes to a temp file unless --out
  --no-profile  skip the CPU profiles of the frontend (scenarios 1, 2, 4; full runs only by default)
  --profile     take them in --quick runs too
  --out FILE    where to write the report (default docs/benchmarks.md)
  --shedding "FLAGS"  thresholds of the shedding-on frontend in scenario 7, for experiments
                (default "${DEFAULT_SHEDDING.join(' ')}", the configuration of record)
  --objective "FLAGS"  flags of scenario 7's TTFT-objective frontend beside --ttft-slo-ms, for
                experiments (default "${defaultObjective(DEFAULT_SHEDDING).join(' ')}")
  --compare-node PATH  the Node that scenario 10 compares the runtime of record with (default:
                the first other \`node\` on PATH, e.g. the system Node; "none": skip it)`;

function parseArgs(argv: string[]): Args {
  const a: Args = {
    quick: false,
    only: null,
    profile: null,
    out: null,
    shedding: DEFAULT_SHEDDING,
    objective: null,
    compareNode: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const eq = argv[i].indexOf('=');
    const flag = eq === -1 ? argv[i] : argv[i].slice(0, eq);
    const inline = eq === -1 ? undefined : argv[i].slice(eq + 1);
    const value = (): string => inline ?? argv[++i];
    if (flag === '--quick') a.quick = true;
    else if (flag === '--no-profile') a.profile = false;
    else if (flag === '--profile') a.profile = true;
    else if (flag === '--only') a.only = value().split(',').map(Number);
    else if (flag === '--out') a.out = value();
    else if (flag === '--shedding') a.shedding = value().split(/\s+/).filter(Boolean);
    else if (flag === '--objective') a.objective = value().split(/\s+/).filter(Boolean);
    else if (flag === '--compare-node') a.compareNode = value();
    else if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else {
      console.error(`unknown argument '${argv[i]}'\n${USAGE}`);
      process.exit(2);
    }
  }
  return a;
}

const started = Date.now();
const stamp = (): string => `[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s]`;
const log = (msg: string): void => console.log(`${stamp()} ${msg}`);

async function preflight(natsUrl: string): Promise<void> {
  if (!nginxBinary()) {
    console.error(NGINX_INSTALL_HINT);
    process.exit(2);
  }
  if (!hasTaskset())
    log('warning: taskset not found (util-linux): processes will not be pinned to cores');
  try {
    const nc = await connect({ servers: natsUrl, timeout: 3000 });
    await nc.close();
  } catch (err) {
    console.error(
      `NATS is not reachable at ${natsUrl} (${String(err)}); start it (see docs/toolchain facts)`,
    );
    process.exit(2);
  }
  const pg = new Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres' });
  try {
    await pg.connect();
    await pg.end();
  } catch (err) {
    console.error(`PostgreSQL is not reachable at 127.0.0.1:5432 as postgres (${String(err)})`);
    process.exit(2);
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
  const docsDir = join(ROOT, 'docs');
  const foreign = new ForeignLoadMonitor();
  foreign.start();
  const dbName = `sluice_bench_${process.pid}`;
  const setup = new ProcessGroup(logDir);
  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals): void => {
    if (interrupted) return;
    interrupted = true;
    log(`${sig}: stopping every process the bench started`);
    void stopEverything()
      .then(() => dropDatabase(dbName))
      .catch(() => undefined)
      .finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const selected = SCENARIOS.filter((s) => !args.only || args.only.includes(s.id));
  log(
    `Sluice bench${args.quick ? ' (quick)' : ''}: scenarios ${selected.map((s) => s.id).join(', ')}; logs in ${logDir}`,
  );
  const databaseUrl = await createDatabase(setup, dbName);
  const ctx: BenchContext = {
    quick: args.quick,
    profile: args.profile ?? !args.quick,
    sheddingFlags: args.shedding,
    objectiveFlags: args.objective ?? defaultObjective(args.shedding),
    natsUrl,
    databaseUrl,
    tmpDir,
    logDir,
    docsDir,
    foreign,
    compareNode: selected.some((s) => s.id === 10) ? comparisonRuntime(args.compareNode) : null,
    log: (m) => log(`  ${m}`),
    group: () => new ProcessGroup(logDir),
  };
  const outcomes: ScenarioOutcome[] = [];
  try {
    for (const s of selected) {
      if (interrupted) break;
      outcomes.push(await runScenario(ctx, s));
    }
  } finally {
    await stopEverything();
    await dropDatabase(dbName).catch(() => undefined);
  }
  foreign.stop();
  writeReport(args, ctx, outcomes);
}

async function runScenario(ctx: BenchContext, s: Scenario): Promise<ScenarioOutcome> {
  log(`scenario ${s.id}: ${s.title}`);
  const t0 = Date.now();
  let outcome: Omit<ScenarioOutcome, 'runtimeS' | 'foreign'>;
  try {
    const result = await s.run(ctx);
    for (const f of result.figures) {
      log(
        `  => ${f.name}: ${f.median === null ? '–' : f.median.toFixed(f.unit === '×' ? 3 : 1)} ${f.unit} (target ${f.target}) ${f.verdict}`,
      );
    }
    outcome = { id: s.id, title: s.title, result, error: null };
  } catch (err) {
    const msg = err instanceof Error ? (err.stack ?? err.message) : String(err);
    log(`  scenario ${s.id} FAILED: ${msg}`);
    outcome = { id: s.id, title: s.title, result: null, error: msg };
  }
  await stopEverything();
  const t1 = Date.now();
  return { ...outcome, runtimeS: (t1 - t0) / 1000, foreign: ctx.foreign.between(t0, t1) };
}

function writeReport(args: Args, ctx: BenchContext, outcomes: ScenarioOutcome[]): void {
  const out =
    args.out ??
    // Only a full run of every scenario replaces the report of record.
    (args.only || args.quick
      ? join(ctx.tmpDir, 'benchmarks.md')
      : join(ctx.docsDir, 'benchmarks.md'));
  // Plots go beside the report: docs/bench/ for the report of record.
  const plotDir = join(dirname(out), 'bench');
  const plots: Array<{ file: string; alt: string }> = [];
  for (const o of outcomes) {
    for (const p of o.result?.plots ?? []) {
      mkdirSync(plotDir, { recursive: true });
      const file = join(plotDir, `${p.name}.svg`);
      writeFileSync(file, p.svg);
      plots.push({ file: relative(join(out, '..'), file), alt: p.alt });
    }
  }
  const argv = process.argv.slice(2);
  const md = renderReport(
    {
      command: `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`,
      startedAt: new Date(started),
      runtimeS: (Date.now() - started) / 1000,
      machine: machineInfo(),
      quick: args.quick,
      placement:
        'servers under test pinned to CPU 0, load generators and the bench itself to CPU 1 (`taskset`); ' +
        'per-scenario exceptions are stated below',
      foreign: ctx.foreign.between(started, Date.now()),
    },
    outcomes,
    plots,
  );
  writeFileSync(out, md);
  log(`report written to ${relative(ROOT, out) || out}`);
  const failed = outcomes.filter((o) => o.error).length;
  const missed = outcomes
    .flatMap((o) => o.result?.figures ?? [])
    .filter((f) => f.verdict === 'MISS').length;
  log(
    `done in ${((Date.now() - started) / 60000).toFixed(1)} min: ${missed} figure(s) miss their target, ${failed} scenario(s) failed`,
  );
}

main().catch(async (err) => {
  console.error(err);
  await stopEverything();
  process.exit(1);
});
