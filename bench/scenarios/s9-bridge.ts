import { BenchContext, Figure, Scenario, ScenarioResult, verdict } from '../lib/context';
import { profileMarkdown } from '../lib/profile';
import { fmt, maxOf, median, minOf, pct, percentile } from '../lib/util';
import { Reaction, measureReactions } from './s9-reaction';
import { INTERVAL_MS, measureScrapeCost, ScrapeCost, TARGETS } from './s9-scrape-cost';

/** Contract §7's staleness goal: a report is never older than two scrape intervals. */
const AGE_TARGET_MS = 2 * INTERVAL_MS;
const OFFERED = (TARGETS * 1000) / INTERVAL_MS;

function distributionFigure(name: string, xs: number[], what: string): Figure {
  const v = percentile(xs, 99);
  return {
    scenario: 9,
    name: `${name} (p99 of ${xs.length.toLocaleString('en-US')} ${what})`,
    target: `≤ ${AGE_TARGET_MS} ms`,
    unit: 'ms',
    median: v,
    min: minOf(xs),
    max: maxOf(xs),
    verdict: verdict(v !== null && v <= AGE_TARGET_MS),
  };
}

function measured(name: string, v: number | null, unit: string, note?: string): Figure {
  return {
    scenario: 9,
    name,
    target: '(measured)',
    unit,
    median: v,
    min: null,
    max: null,
    verdict: 'n/a',
    note,
  };
}

/** A count, with thousands separators. */
const n = (x: number): string => x.toLocaleString('en-US');
const q = (xs: number[], p: number): string => fmt(percentile(xs, p), 1);
const row = (label: string, xs: number[]): string =>
  `| ${label} | ${xs.length.toLocaleString('en-US')} | ${q(xs, 50)} | ${q(xs, 90)} | ${q(xs, 99)} | ${fmt(maxOf(xs), 1)} |`;

/** The whole-body run, measured beside the run of record (no target: see the details). */
function wholeBodyFigures(c: ScrapeCost): Figure[] {
  const total = Object.values(c.scrapes).reduce((a, b) => a + b, 0);
  const what = `Engine bridge, ${fmt(TARGETS)} engines sending the whole body`;
  return [
    measured(`${what}: report age on NATS, p99`, percentile(c.ageBeforeNextMs, 99), 'ms'),
    measured(
      `${what}: CPU per target scrape`,
      total > 0 ? (c.bridgeCpuMs * 1000) / total : null,
      'µs',
      `${fmt(total / c.windowS)} of ${fmt(OFFERED)} scrapes/s achieved`,
    ),
  ];
}

function scrapeFigures(c: ScrapeCost): Figure[] {
  const total = Object.values(c.scrapes).reduce((a, b) => a + b, 0);
  const rate = total / c.windowS;
  return [
    distributionFigure(
      `Engine bridge, ${fmt(TARGETS)} targets: report age on NATS when the next report arrives`,
      c.ageBeforeNextMs,
      'reports',
    ),
    distributionFigure(
      `Engine bridge, ${fmt(TARGETS)} targets: report age, the bridge's own gauge`,
      c.gaugeAgeMs,
      'samples',
    ),
    measured(
      `Engine bridge, ${fmt(TARGETS)} targets: scrapes/s achieved (${fmt(OFFERED)} offered)`,
      rate,
      'scrapes/s',
      `${fmt((100 * rate) / OFFERED, 1)} % of offered, ${n(total - c.scrapes.ok)} failed`,
    ),
    measured(
      'Engine bridge: CPU per target scrape',
      total > 0 ? (c.bridgeCpuMs * 1000) / total : null,
      'µs',
      `${fmt(c.bridgeCpuMs / 1000 / c.windowS, 2)} cores at ${fmt(rate)} scrapes/s`,
    ),
    measured(`Engine bridge, ${fmt(TARGETS)} targets: RSS`, c.rssMaxMb, 'MB'),
  ];
}

function startupText(c: ScrapeCost): string {
  const u = c.startup;
  return (
    `**Start-up.** Every target had reported ${fmt(u.allReportedS, 1)} s after the bridge started. ` +
    (u.settled
      ? `It settled (no failed scrape for 3 s) ${fmt(u.settledS, 0)} s after start`
      : `It had not settled (a failed scrape in every 3 s) ${fmt(u.settledS, 0)} s after start; the window was measured anyway`) +
    `; until then ${n(u.failedScrapes)} scrapes failed and ${n(u.workerDowns)} worker_down were published. ` +
    "Each target's first scrape starts at a random point of the first interval, and a scrape that " +
    'finds the previous one of its target still running is skipped, so the start-up load is one ' +
    `interval's worth (${fmt(TARGETS)} requests, ${fmt((TARGETS * c.answerBytes) / 1e6, 1)} MB of answers).`
  );
}

function scrapeDetails(c: ScrapeCost): string {
  const total = Object.values(c.scrapes).reduce((a, b) => a + b, 0);
  const usPerScrape = total > 0 ? (c.bridgeCpuMs * 1000) / total : NaN;
  return [
    c.filtered
      ? '#### Scrape cost and staleness (engines answering the name filter, as vLLM does)'
      : '#### The same, engines sending the whole body to every scrape',
    '',
    c.filtered
      ? "The bridge asks for `/metrics?name[]=…` with the four families it reads; vLLM's exporter " +
        `(prometheus_client) answers only those: ${fmt(c.answerBytes)} bytes instead of ${fmt(c.bodyBytes)}. ` +
        'An exporter that ignores the query, or prometheus_client in multiprocess mode (several vLLM ' +
        'API server processes; it answers the filter with nothing, and the bridge then reads the whole ' +
        'body of that target), costs what the second run below measures.'
      : 'The same 1,000 engines, now ignoring the filter: every scrape reads the whole body.',
    '',
    `${fmt(TARGETS)} fake vLLM engines on loopback, one port each (one process, \`bench/tools/engine-farm\`), every one`,
    `serving a realistic vLLM 0.11 \`/metrics\` body of ${fmt(c.bodyBytes)} bytes (about 530 lines: process and GC`,
    "collectors, the HTTP instrumentator, vLLM's gauges, counters and 14 histograms with vLLM's buckets,",
    '`cache_config_info`; the bridge needs four of the lines). One standalone bridge',
    `(\`dist/apps/bridge/main.js --engine vllm --targets-file\`) scrapes them all at the default ${INTERVAL_MS} ms`,
    `interval (${fmt(OFFERED)} scrapes/s offered) and publishes on ${c.natsPrivate ? 'a private nats-server' : 'NATS'}. The bridge`,
    "on CPU 0 (alone among the bench's processes); the engines, NATS and the bench (reading every report, as a",
    `frontend would) on CPU 1; other work on the machine meanwhile: ${fmt(c.otherLoad.mean, 2)} cores on average.`,
    `Measured over ${fmt(c.windowS, 0)} s after every target had reported and a warm-up. *Age on NATS when the next`,
    "report arrives*: for each report, now − the previous report's `timestamp_ms` for that worker: the oldest",
    "a frontend's view of the worker gets before it is refreshed (the worst case, not an average). *Age on",
    "arrival*: now − the report's own `timestamp_ms`. *Gauge*: `sluice_bridge_report_age_seconds` of every",
    `worker, read ${c.gaugeSamples} times from the bridge's /metrics during the window (an instant in the cycle:`,
    'half the interval on average). CPU from /proc of the bridge pid (user + system, including those',
    'renders of its own /metrics), per scrape counted by `sluice_bridge_scrapes_total`.',
    '',
    '| age measure | samples | p50 ms | p90 ms | p99 ms | max ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    row('on NATS, when the next report arrives', c.ageBeforeNextMs),
    row('on NATS, on arrival (publish → frontend)', c.arrivalAgeMs),
    row('`sluice_bridge_report_age_seconds`', c.gaugeAgeMs),
    '',
    '| scrapes/s offered | achieved | ok / error / timeout / unparsable | reports on NATS (workers) | worker_down | bridge CPU | µs CPU / scrape | bridge RSS max | engines CPU |',
    '| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| ${fmt(OFFERED)} | ${fmt(total / c.windowS)} | ${c.scrapes.ok} / ${c.scrapes.error} / ${c.scrapes.timeout} / ${c.scrapes.unparsable} | ` +
      `${fmt(c.reports)} (${fmt(c.workers)}) | ${c.workerDowns} | ${pct(c.bridgeCpuMs / 1000 / c.windowS)} | ${fmt(usPerScrape, 1)} | ` +
      `${fmt(c.rssMaxMb, 0)} MB | ${pct(c.farmCores)} |`,
    '',
    startupText(c),
    '',
    `At ${fmt(usPerScrape, 0)} µs per scrape one core sustains about ${fmt(1e6 / usPerScrape)} scrapes/s, i.e.`,
    `about ${fmt((1e6 / usPerScrape) * (INTERVAL_MS / 1000))} targets at ${INTERVAL_MS} ms on one Node process; the cost per scrape`,
    'is the HTTP round trip on a kept-alive connection, reading the body, skipping the lines of',
    'families the adapter does not use, and one JSON report published on NATS.',
    '',
    c.profile
      ? profileMarkdown(
          `the bridge scraping ${fmt(TARGETS)} vLLM engines (a second run)`,
          c.profile,
        )
      : '',
  ].join('\n');
}

function reactionDetails(rs: Reaction[]): string {
  const rows = rs.flatMap((r) => [
    `| ${r.label} | over → first 503 | ${r.up.length} | ${q(r.up, 50)} | ${q(r.up, 90)} | ${q(r.up, 99)} | ${fmt(maxOf(r.up), 1)} | ${q(r.upWait, 50)} / ${fmt(maxOf(r.upWait), 1)} | ${fmt(median(diffs(r.up, r.upWait)), 1)} |`,
    `| ${r.label} | under → first 200 | ${r.down.length} | ${q(r.down, 50)} | ${q(r.down, 90)} | ${q(r.down, 99)} | ${fmt(maxOf(r.down), 1)} | ${q(r.downWait, 50)} / ${fmt(maxOf(r.downWait), 1)} | ${fmt(median(diffs(r.down, r.downWait)), 1)} |`,
  ]);
  const all = rs.flatMap((r) => [...diffs(r.up, r.upWait), ...diffs(r.down, r.downWait)]);
  return [
    '#### Reaction: engine load over the threshold → first 503',
    '',
    'One fake vLLM engine (testkit `FakeEngine` in the bench process, the same realistic body) whose',
    '`vllm:kv_cache_usage_perc` the bench flips between 0.10 and 0.90 of 2,048 blocks, behind a frontend',
    'with `--admission-control token-capacity --active-decode-blocks-threshold 0.85` on CPU 0; (a) the',
    'embedded app (`npm start`) with `--engine-target vllm=probe=URL`, its bridge publishing on the',
    'in-process bus; (b) a standalone bridge (CPU 0) with `--target probe=URL` publishing on NATS to a',
    'frontend. Each trial waits a random 5–255 ms (so the flip lands anywhere in the scrape cycle), swaps',
    'the body, and probes with chat requests about once a millisecond until the first 503; then the same',
    'back under, until the first 200 (an admitted probe is answered by the fake engine). *Wait for the',
    "scrape*: flip → the engine's next `GET /metrics` (polled every ms); *scrape → answer*: the rest.",
    '',
    '| deployment | direction | trials | p50 ms | p90 ms | p99 ms | max ms | wait for the scrape p50 / max ms | scrape → answer p50 ms |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    `**What limits it: the scrape interval.** A flip waits for the next scrape, anywhere from 0 to ${INTERVAL_MS} ms`,
    `(uniform: median about ${INTERVAL_MS / 2} ms), and the rest — the scrape itself, mapping, the report through the`,
    `bus, the frontend applying it, the next probe — takes ${fmt(median(all), 1)} ms at the median (p99 ${fmt(percentile(all, 99), 1)} ms).`,
    `So the reaction is at most about one interval plus a few ms; a shorter \`--scrape-interval-ms\` shortens`,
    'it in proportion, at the CPU cost per scrape measured above.',
    ...rs.map(
      (r) =>
        `Scrape → answer, ${r.label}: p50 ${fmt(median(rest(r)), 1)} ms, p99 ${fmt(percentile(rest(r), 99), 1)} ms.`,
    ),
  ].join('\n');
}

const rest = (r: Reaction): number[] => [...diffs(r.up, r.upWait), ...diffs(r.down, r.downWait)];

/** Total minus wait, trial by trial (only where the wait was seen). */
function diffs(total: number[], waits: number[]): number[] {
  return waits.length === total.length ? total.map((t, i) => t - waits[i]) : [];
}

function reactionFigures(rs: Reaction[]): Figure[] {
  return rs.flatMap((r) => {
    const name = `Engine bridge reaction, ${r.label.replace(/ \(.*\)$/, '')}`;
    return [
      distributionFigure(`${name}: over threshold → first 503`, r.up, 'trials'),
      distributionFigure(`${name}: back under → first 200`, r.down, 'trials'),
    ];
  });
}

function analysis(c: ScrapeCost, rs: Reaction[], figures: Figure[]): string[] {
  const cores = c.bridgeCpuMs / 1000 / c.windowS;
  const total = Object.values(c.scrapes).reduce((a, b) => a + b, 0);
  const top = c.profile
    ? ` Profile of the bridge: self time by owner ${c.profile.owners
        .slice(0, 6)
        .map((o) => `${o.owner} ${o.selfPct.toFixed(0)} %`)
        .join(', ')}; hottest functions ${c.profile.functions
        .slice(0, 5)
        .map((f) => `\`${f.name}\` (${f.where}, ${f.selfPct.toFixed(1)} %)`)
        .join(', ')}.`
    : '';
  return figures
    .filter((f) => f.verdict === 'MISS')
    .map((f) => {
      const head = `**${f.name}: ${fmt(f.median, 1)} ms (target ≤ ${AGE_TARGET_MS} ms).** `;
      if (f.name.includes('reaction')) {
        const waits = rs.flatMap((r) => [...r.upWait, ...r.downWait]);
        const all = rs.flatMap(rest);
        const late = (maxOf(waits) ?? 0) > INTERVAL_MS + 20;
        return (
          head +
          (late
            ? `The wait for the next scrape, at most one interval (${INTERVAL_MS} ms) when the bridge's timer fires on time, ` +
              `reached ${fmt(maxOf(waits), 0)} ms: the scrape started late, i.e. the process running the bridge (CPU 0, which ` +
              `other work on the machine shared) or the bench's fake engine was stalled. Scrape → answer p99 ${fmt(percentile(all, 99), 1)} ms.`
            : `The wait for the next scrape stayed within one interval (${INTERVAL_MS} ms); scrape → answer took p99 ` +
              `${fmt(percentile(all, 99), 1)} ms, max ${fmt(maxOf(all), 1)} ms: the report's way through the bus and the frontend.`)
        );
      }
      const us = (c.bridgeCpuMs * 1000) / total;
      const capacity = 1e6 / us;
      return (
        head +
        `The bridge achieved ${fmt(total / c.windowS)} of the ${fmt(OFFERED)} scrapes/s offered, so each target was scraped every ` +
        `~${fmt((TARGETS * 1000 * c.windowS) / total, 0)} ms instead of ${INTERVAL_MS} and its reports aged accordingly. ` +
        `It used ${pct(cores)} of a core at ${fmt(us, 0)} µs of CPU per scrape` +
        (capacity < OFFERED
          ? `: even a whole core would sustain only ~${fmt(capacity)} scrapes/s (~${fmt(capacity / (1000 / INTERVAL_MS))} targets at ${INTERVAL_MS} ms), ` +
            'so the limit is CPU per scrape in one Node process (one event loop scrapes every target)'
          : `, which a whole core would sustain: it did not get one`) +
        '. A fleet this large wants its targets split over several bridges (one targets file each), ' +
        'or a longer --scrape-interval-ms' +
        ` (other work on the machine meanwhile: ${fmt(c.otherLoad.mean, 2)} cores on average).` +
        (c.scrapes.timeout + c.workerDowns > 0
          ? ` In the window ${n(c.scrapes.timeout)} scrapes timed out and ${n(c.workerDowns)} worker_down were published for ` +
            'engines that answered.'
          : '') +
        top
      );
    });
}

function logCost(ctx: BenchContext, c: ScrapeCost): void {
  const total = Object.values(c.scrapes).reduce((a, b) => a + b, 0);
  ctx.log(
    `${c.filtered ? 'filtered' : 'whole body'}: ${fmt(total / c.windowS)} scrapes/s, age before next p99 ${q(c.ageBeforeNextMs, 99)} ms, ` +
      `gauge p99 ${q(c.gaugeAgeMs, 99)} ms, bridge ${fmt((c.bridgeCpuMs * 1000) / total, 1)} µs CPU/scrape, RSS ${fmt(c.rssMaxMb, 0)} MB`,
  );
}

/**
 * Scenario 9: the engine bridge's cost and staleness scraping 1,000 vLLM engines, and the
 * reaction from an engine's load crossing the threshold to the first 503, in-process and over NATS.
 */
export const bridgeScenario: Scenario = {
  id: 9,
  title: 'Engine bridge',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const cost = await measureScrapeCost(ctx, true);
    logCost(ctx, cost);
    const wholeBody = await measureScrapeCost(ctx, false);
    logCost(ctx, wholeBody);
    const reactions = await measureReactions(ctx);
    for (const r of reactions) {
      ctx.log(
        `${r.label}: → 503 p50 ${q(r.up, 50)} / max ${fmt(maxOf(r.up), 1)} ms; → 200 p50 ${q(r.down, 50)} / max ${fmt(maxOf(r.down), 1)} ms`,
      );
    }
    const figures = [
      ...scrapeFigures(cost),
      ...wholeBodyFigures(wholeBody),
      ...reactionFigures(reactions),
    ];
    return {
      figures,
      details: [
        scrapeDetails(cost),
        '',
        scrapeDetails(wholeBody),
        '',
        reactionDetails(reactions),
      ].join('\n'),
      analysis: analysis(cost, reactions, figures),
    };
  },
};
