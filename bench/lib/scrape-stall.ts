import { Client } from 'undici';
import { CpuMeter } from './procfs';
import { nowNs, sleep } from './util';

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
