import { Client } from 'undici';
import { Figure, verdict } from './context';
import { CpuMeter } from './procfs';
import { fmt, maxOf, median, minOf, nowNs, sleep, whileStopped } from './util';

const STALL_TARGET_MS = 10;
/** Probing before each scrape, so the connection is warm. */
const WARMUP_MS = 50;
/** How long after the scrape's answer a gap still counts as the scrape's. */
const SETTLE_MS = 5;

export interface ScrapeStall {
  /** Per scrape: the longest gap between two probe answers while the scrape was served (ms). */
  stalls: number[];
  /** Per scrape: the longest gap in an equally long window just after it (ms). */
  idleGaps: number[];
  /** Wall time of each scrape as the client saw it (ms). */
  scrapeMs: number[];
  /** Frontend CPU per scrape, from back-to-back scrapes without the probe (ms). */
  cpuMsPerScrape: number;
  bytes: number;
}

/**
 * The event-loop stall of a `/metrics` scrape, seen from outside: `GET /live` back to back on
 * one kept-alive connection while the scrape runs. A probe is answered only between two turns
 * of the event loop, so the longest gap between consecutive answers is the longest the loop
 * was held (plus one probe round trip). The same gap over an equally long window without a
 * scrape shows what the machine alone adds (preemption by other load, the collector).
 */
export async function measureScrapeStall(
  base: string,
  pid: number,
  scrapes: number,
): Promise<ScrapeStall> {
  const probe = new Client(base, { pipelining: 1, keepAliveTimeout: 60000 });
  const scraper = new Client(base, { pipelining: 1, keepAliveTimeout: 60000 });
  const out: ScrapeStall = { stalls: [], idleGaps: [], scrapeMs: [], cpuMsPerScrape: 0, bytes: 0 };
  try {
    for (let i = 0; i < scrapes; i++) {
      const answers: number[] = [];
      let probing = true;
      const loop = (async () => {
        while (probing) {
          const res = await probe.request({ path: '/live', method: 'GET' });
          await res.body.dump();
          answers.push(nowNs());
        }
      })();
      await sleep(WARMUP_MS);
      const sent = nowNs();
      out.bytes = await scrape(scraper);
      const done = nowNs();
      const took = done - sent;
      // The same length of time without a scrape, for what the machine's noise alone gives.
      await sleep(SETTLE_MS + took / 1e6 + 20);
      probing = false;
      await loop;
      out.scrapeMs.push(took / 1e6);
      // The probe answer held back behind the scrape's own answer belongs to it too.
      out.stalls.push(maxGap(answers, sent, done));
      const idleFrom = done + SETTLE_MS * 1e6;
      out.idleGaps.push(maxGap(answers, idleFrom, idleFrom + took));
    }
    const meter = new CpuMeter(pid);
    for (let i = 0; i < scrapes; i++) await scrape(scraper);
    out.cpuMsPerScrape = meter.usedMs() / scrapes;
  } finally {
    await probe.close();
    await scraper.close();
  }
  return out;
}

/** One scrape, its body counted but not decoded: the bench's own loop must stay free too. */
async function scrape(client: Client): Promise<number> {
  const res = await client.request({ path: '/metrics', method: 'GET' });
  let bytes = 0;
  for await (const chunk of res.body) bytes += (chunk as Buffer).length;
  return bytes;
}

/** Longest interval between consecutive answers among the intervals overlapping [from, to]. */
function maxGap(answers: number[], from: number, to: number): number {
  let max = 0;
  for (let k = 1; k < answers.length; k++) {
    if (answers[k] < from || answers[k - 1] > to) continue;
    max = Math.max(max, answers[k] - answers[k - 1]);
  }
  return max / 1e6;
}

export function stallFigure(scenario: number, ranks: number, s: ScrapeStall): Figure {
  const mid = median(s.stalls);
  return {
    scenario,
    name: `Event-loop stall of a \`/metrics\` scrape, ${ranks.toLocaleString('en-US')} ranks tracked`,
    target: `< ${STALL_TARGET_MS} ms`,
    unit: 'ms',
    median: mid,
    min: minOf(s.stalls),
    max: maxOf(s.stalls),
    // The median scrape: on a shared machine a preempted frontend shows as a gap too.
    verdict: verdict(mid !== null && mid < STALL_TARGET_MS),
    note: 'verdict on the median scrape',
  };
}

export function stallDetails(s: ScrapeStall): string {
  return [
    `Scrape stall: after the steady phase (reports and traffic stopped, every worker still tracked),`,
    `${s.stalls.length} scrapes of \`/metrics\` (${fmt(s.bytes / 1024, 0)} KiB), each while the bench sent \`GET /live\` back to back`,
    `on one kept-alive connection; the stall is the longest gap between two probe answers while the`,
    `scrape was served: ${s.stalls.map((x) => fmt(x)).join(', ')} ms. The machine's own noise: the longest gap in a`,
    `window as long, just after each scrape: ${s.idleGaps.map((x) => fmt(x)).join(', ')} ms. Scrape wall time median ${fmt(median(s.scrapeMs))} ms;`,
    `frontend CPU per scrape ${fmt(s.cpuMsPerScrape)} ms (\`/proc\` ticks over ${s.stalls.length} back-to-back scrapes without the probe).`,
  ].join('\n');
}

/**
 * `measureScrapeStall` on two frontends in alternating blocks of `block` scrapes (the order of
 * the pair alternates too), `scrapes` on each: a comparison whose minutes are shared. The one not
 * measured is stopped (SIGSTOP) meanwhile, so that its own timers cannot show as the other's
 * stall on a shared core.
 */
export async function interleavedScrapeStalls(
  a: { url: string; pid: number },
  b: { url: string; pid: number },
  scrapes: number,
  block = 5,
): Promise<[ScrapeStall, ScrapeStall]> {
  const parts: [ScrapeStall[], ScrapeStall[]] = [[], []];
  for (let i = 0; i * block < scrapes; i++) {
    const n = Math.min(block, scrapes - i * block);
    for (const k of i % 2 === 0 ? [0, 1] : [1, 0]) {
      const [fe, other] = k === 0 ? [a, b] : [b, a];
      parts[k].push(await whileStopped([other.pid], () => measureScrapeStall(fe.url, fe.pid, n)));
    }
  }
  return [joinStalls(parts[0]), joinStalls(parts[1])];
}

function joinStalls(parts: ScrapeStall[]): ScrapeStall {
  const n = parts.reduce((sum, p) => sum + p.stalls.length, 0);
  return {
    stalls: parts.flatMap((p) => p.stalls),
    idleGaps: parts.flatMap((p) => p.idleGaps),
    scrapeMs: parts.flatMap((p) => p.scrapeMs),
    cpuMsPerScrape: parts.reduce((sum, p) => sum + p.cpuMsPerScrape * p.stalls.length, 0) / n,
    bytes: parts[parts.length - 1]?.bytes ?? 0,
  };
}
