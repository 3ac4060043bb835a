import { Heartbeat, ReportBus } from '../lib/bus';
import { BenchContext, CPU, Figure, figureOver } from '../lib/context';
import { fixedRate, FixedRateResult } from '../lib/fixed-rate';
import { chatBody, MODEL, PacedProber } from '../lib/http';
import { rssMb } from '../lib/procfs';
import { Runtime, ownRuntime } from '../lib/runtimes';
import { measureScrapeStall, ScrapeStall } from '../lib/scrape-stall';
import { DECODE_SHEDDING, startFrontend, startWorker } from '../lib/sluice';
import { fmt, maxOf, median, nowNs, percentile, rotate, uniqueNamespace } from '../lib/util';
import { ProcessGroup } from '@sluice/testkit';
import { prewarm, RANKS, startRig, WORKERS } from './s4-ingest';
import { flipTrials, reporter } from './s5-reaction';

const PATH = '/v1/chat/completions';

/** What one measurement adds to scenario 10: its figures and a paragraph for the details. */
export interface Beside {
  figures: Figure[];
  details: string;
}

/** The base URLs of the two runtimes' servers of one kind, record first. */
export type Pair = [record: string, other: string];

const measured = (name: string, xs: number[], unit: string): Figure =>
  figureOver(10, name, xs, '(measured)', unit, 'n/a');

const versions = (other: Runtime): [string, string] => [ownRuntime().version, other.version];

/**
 * Scenario 2's latency figures on both runtimes: the open-loop client at `rate` straight to the
 * worker and through each runtime's admitted-path frontend, in interleaved rounds; "added" is a
 * frontend's percentile minus the direct one of the same round. The worker stays on the client
 * core for all three, so the rounds differ only in the hop.
 */
export async function latencyBeside(
  ctx: BenchContext,
  g: ProcessGroup,
  workerUrl: string,
  pair: Pair,
  rate: number,
  other: Runtime,
): Promise<Beside> {
  const rounds = ctx.quick ? 1 : 3;
  const seconds = ctx.quick ? 1.5 : 5;
  const warmup = ctx.quick ? 0.5 : 2;
  const urls = [workerUrl, ...pair];
  const res: FixedRateResult[][] = [[], [], []];
  const body = chatBody();
  ctx.log(`latency at ${rate} req/s: direct and both runtimes, ${rounds} rounds of ${seconds} s`);
  for (let r = 0; r < rounds; r++) {
    for (const k of rotate([0, 1, 2], r)) {
      const x = await fixedRate(g, `${urls[k]}${PATH}`, rate, seconds, body, 64, warmup);
      if (x.errors > 0 || Object.keys(x.statuses).some((s) => s !== '200'))
        throw new Error(
          `latency at ${rate} req/s: ${JSON.stringify(x.statuses)}, ${x.errors} errors`,
        );
      res[k].push(x);
    }
  }
  const ms = (us: number | null): number => (us ?? NaN) / 1000;
  const added = (k: 1 | 2, p: 'p50_us' | 'p99_us'): number[] =>
    res[k].map((x, i) => ms(x[p]) - ms(res[0][i][p]));
  const [own, theirs] = versions(other);
  const figures: Figure[] = [];
  for (const [k, v] of [
    [1, own],
    [2, theirs],
  ] as const) {
    figures.push(
      measured(
        `Runtime: admitted path added p50 at ${rate} req/s on ${v}`,
        added(k, 'p50_us'),
        'ms',
      ),
    );
    figures.push(
      measured(
        `Runtime: admitted path added p99 at ${rate} req/s on ${v}`,
        added(k, 'p99_us'),
        'ms',
      ),
    );
  }
  const cell = (k: number, i: number): string =>
    `${ms(res[k][i].p50_us).toFixed(2)} / ${ms(res[k][i].p99_us).toFixed(2)}`;
  const rows = res[0].map((_, i) => `| ${i + 1} | ${cell(0, i)} | ${cell(1, i)} | ${cell(2, i)} |`);
  const details = [
    `Admitted-path latency at ${rate} req/s (half of the ${own} frontend's median maximum above),`,
    `open loop after ${warmup} s unrecorded, ${rounds} interleaved rounds of ${seconds} s; the worker on CPU 1`,
    'beside the client for all three, so a round differs only in the hop.',
    '',
    `| round | direct p50 / p99 ms | Sluice on ${own} p50 / p99 ms | Sluice on ${theirs} p50 / p99 ms |`,
    '| ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
  return { figures, details };
}

/**
 * Scenario 5's reaction on both runtimes: one frontend per runtime on the same reports, the
 * trials alternating between them (trial i probes runtime i mod 2).
 */
export async function reactionBeside(
  ctx: BenchContext,
  g: ProcessGroup,
  other: Runtime,
): Promise<Beside> {
  const ns = uniqueNamespace('s10r');
  const bus = await ReportBus.connect(ctx.natsUrl, ns);
  const hb = new Heartbeat(bus);
  const probes: PacedProber[] = [];
  try {
    const worker = await startWorker(g, ['--speedup', '0'], {
      cpu: CPU.client,
      name: 'worker-reaction',
    });
    const common = {
      natsUrl: ctx.natsUrl,
      databaseUrl: ctx.databaseUrl,
      namespace: ns,
      cpu: CPU.server,
      flags: DECODE_SHEDDING,
    };
    const fes = [
      await startFrontend(g, { ...common, name: 'frontend-reaction-record' }),
      await startFrontend(g, { ...common, node: other.path, name: 'frontend-reaction-other' }),
    ];
    const report = reporter(hb, worker.url);
    for (const fe of fes) probes.push(new PacedProber(fe.url, PATH, chatBody(MODEL, 1)));
    report(10);
    for (const p of probes) await p.until((s) => s === 200, nowNs(), 10000);
    const trials = ctx.quick ? 60 : 400;
    ctx.log(`reaction: ${trials} trials alternating between the runtimes`);
    const flips = await flipTrials(report, probes, trials);
    const [own, theirs] = versions(other);
    const figures: Figure[] = [];
    const lines: string[] = [];
    flips.forEach((f, k) => {
      const v = k === 0 ? own : theirs;
      for (const [dir, xs] of [
        ['report over threshold → first 503', f.up],
        ['report back under → first 200', f.down],
      ] as const) {
        const p99 = percentile(xs, 99);
        figures.push({
          ...measured(`Runtime: reaction, ${dir} on ${v} (p99 of ${xs.length} trials)`, xs, 'ms'),
          median: p99,
        });
        lines.push(
          `| ${v} | ${dir} | ${xs.length} | ${fmt(percentile(xs, 50), 2)} | ${fmt(p99, 2)} | ${fmt(maxOf(xs), 2)} |`,
        );
      }
    });
    const details = [
      'Reaction (scenario 5) on both runtimes: one frontend per runtime (CPU 0) on the same reports,',
      'one simulated worker behind them; the trials alternate between the two frontends. Median column: p99.',
      '',
      '| Node | direction | trials | p50 ms | p99 ms | max ms |',
      '| --- | --- | ---: | ---: | ---: | ---: |',
      ...lines,
    ].join('\n');
    return { figures, details };
  } finally {
    hb.stop();
    await Promise.all(probes.map((p) => p.close()));
    await bus.close();
  }
}

/**
 * Scenario 8's scrape stall on both runtimes: the rig of scenarios 4 and 8 (1,000 workers × 8
 * ranks) feeding a frontend on each runtime, then blocks of scrapes alternating between them.
 * Also each frontend's RSS once every rank is tracked.
 */
export async function stallBeside(
  ctx: BenchContext,
  g: ProcessGroup,
  other: Runtime,
): Promise<Beside> {
  const rig = await startRig(ctx, g, 's10s', 'mixed');
  try {
    const theirs = await startFrontend(g, {
      ...rig.frontendOptions,
      node: other.path,
      cpu: CPU.server,
      name: 'frontend-stall-other',
    });
    // Every rank reported again, so the second frontend tracks them all too.
    await prewarm({ ...rig, fe: theirs });
    const fes = [rig.fe, theirs];
    const rss = fes.map((fe) => rssMb(fe.proc.pid));
    const blocks = ctx.quick ? 1 : 3;
    const per = ctx.quick ? 5 : 10;
    const stalls: ScrapeStall[][] = [[], []];
    ctx.log(
      `scrape stall with ${WORKERS * RANKS} ranks: ${blocks} blocks of ${per} scrapes per runtime`,
    );
    for (let b = 0; b < blocks; b++) {
      for (const k of rotate([0, 1], b))
        stalls[k].push(await measureScrapeStall(fes[k].url, fes[k].proc.pid, per));
    }
    const [own, v2] = versions(other);
    const figures: Figure[] = [];
    const lines: string[] = [];
    [own, v2].forEach((v, k) => {
      const xs = stalls[k].flatMap((s) => s.stalls);
      const cpu = median(stalls[k].map((s) => s.cpuMsPerScrape));
      figures.push(
        measured(
          `Runtime: event-loop stall of a \`/metrics\` scrape, ${(WORKERS * RANKS).toLocaleString('en-US')} ranks, on ${v}`,
          xs,
          'ms',
        ),
      );
      lines.push(
        `| ${v} | ${xs.length} | ${fmt(median(xs))} | ${fmt(maxOf(xs))} | ${fmt(cpu)} | ${fmt(rss[k])} |`,
      );
    });
    const details = [
      `Scrape stall (scenario 8) on both runtimes: the ${WORKERS.toLocaleString('en-US')} × ${RANKS} rig registering every rank with a`,
      'frontend on each runtime (both on CPU 0), then blocks of scrapes alternating between them, measured',
      'as in scenario 8 (longest gap between `GET /live` answers while a scrape is served).',
      '',
      '| Node | scrapes | stall median ms | stall max ms | CPU per scrape ms | RSS once every rank is tracked, MB |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...lines,
    ].join('\n');
    return { figures, details };
  } finally {
    await rig.bus.close();
  }
}
