import { Agent } from 'undici';
import { EngineAdapter, EngineSnapshot } from '../engines/engine-adapter';
import { ScrapeOutcome, TargetScraper, nextTick } from './target-scraper';
import { parseTargetSpec } from '../targets/target';
import { ScrapeSlots } from './scrape-slots';

const SNAPSHOT: EngineSnapshot = {
  model: 'm',
  ranks: [{ kvTotalBlocks: 100, activeDecodeBlocks: 10 }],
};

/** An engine that answers after `delayMs` (never when undefined), recording when each scrape began. */
class TimedAdapter implements EngineAdapter {
  readonly engine = 'vllm' as const;
  readonly starts: number[] = [];
  constructor(private readonly delayMs: number | undefined) {}
  scrape(): Promise<EngineSnapshot> {
    this.starts.push(Date.now() - T0);
    if (this.delayMs === undefined) return new Promise(() => undefined);
    return new Promise((resolve) => setTimeout(() => resolve(SNAPSHOT), this.delayMs));
  }
}

const T0 = 1_764_000_000_000;
const dispatcher = new Agent();

function scraper(
  adapter: EngineAdapter,
  opts: {
    intervalMs?: number;
    timeoutMs?: number;
    random?: () => number;
    url?: string;
    slots?: ScrapeSlots;
  } = {},
) {
  const outcomes: ScrapeOutcome[] = [];
  const sut = new TargetScraper(parseTargetSpec(opts.url ?? 'w1=http://127.0.0.1:9'), {
    adapter,
    dispatcher,
    now: () => Date.now(),
    random: opts.random ?? (() => 0),
    slots: opts.slots,
    settings: {
      intervalMs: opts.intervalMs ?? 250,
      timeoutMs: opts.timeoutMs ?? 1000,
      maxBodyBytes: 1024,
    },
    onOutcome: (_t, o) => outcomes.push(o),
  });
  return { sut, outcomes };
}

describe('TargetScraper scheduling', () => {
  beforeEach(() =>
    jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] }),
  );
  afterEach(() => jest.useRealTimers());
  afterAll(() => dispatcher.destroy());

  it('spreads the first scrapes of many targets over the first interval, then keeps them apart', async () => {
    let seed = 0;
    const random = (): number => (seed = (seed * 9301 + 49297) % 233280) / 233280;
    const adapters = Array.from({ length: 200 }, () => new TimedAdapter(5));
    const scrapers = adapters.map((a, i) =>
      scraper(a, { random, url: `w${i}=http://127.0.0.1:${1000 + i}` }),
    );
    for (const s of scrapers) s.sut.start();
    await jest.advanceTimersByTimeAsync(0);
    // Not all at once: at most a few at any one millisecond.
    expect(adapters.filter((a) => a.starts.length > 0).length).toBeLessThan(10);
    await jest.advanceTimersByTimeAsync(1000);
    const firsts = adapters.map((a) => a.starts[0]);
    expect(Math.min(...firsts)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...firsts)).toBeLessThan(250);
    // Spread: every quarter of the interval holds some of the first scrapes.
    for (let q = 0; q < 4; q++) {
      expect(firsts.filter((f) => f >= q * 62.5 && f < (q + 1) * 62.5).length).toBeGreaterThan(20);
    }
    // Each target keeps its own phase: later scrapes are whole intervals after its first.
    for (const a of adapters) {
      expect(a.starts.slice(0, 4)).toEqual([0, 1, 2, 3].map((k) => a.starts[0] + 250 * k));
    }
    await Promise.all(scrapers.map((s) => s.sut.stop()));
  });

  it('does not scrape again at once after a timeout: the next scrape waits for the next tick', async () => {
    const adapter = new TimedAdapter(undefined);
    const { sut, outcomes } = scraper(adapter, { intervalMs: 250, timeoutMs: 500 });
    sut.start();
    await jest.advanceTimersByTimeAsync(1600);
    expect(adapter.starts).toEqual([0, 750, 1500]);
    expect(outcomes.map((o) => (o.ok ? 'ok' : o.failure.result))).toEqual(['timeout', 'timeout']);
    await sut.stop();
  });

  it('skips the ticks a slow scrape ran over instead of piling them up', async () => {
    const adapter = new TimedAdapter(600);
    const { sut, outcomes } = scraper(adapter, { intervalMs: 250 });
    sut.start();
    await jest.advanceTimersByTimeAsync(2000);
    // Ticks at 250 and 500 passed during the first scrape (0–600): the next is at 750.
    expect(adapter.starts).toEqual([0, 750, 1500]);
    expect(outcomes.every((o) => o.ok)).toBe(true);
    await sut.stop();
  });

  it('sends at most the slots in flight; a scrape that waited for a slot is not timed out for it', async () => {
    const slots = new ScrapeSlots(2);
    let inflight = 0;
    let maxInflight = 0;
    const adapters = Array.from({ length: 5 }, () => {
      const a = new TimedAdapter(300);
      const scrape = a.scrape.bind(a);
      a.scrape = async () => {
        maxInflight = Math.max(maxInflight, ++inflight);
        try {
          return await scrape();
        } finally {
          inflight--;
        }
      };
      return a;
    });
    const scrapers = adapters.map((a, i) =>
      scraper(a, { slots, timeoutMs: 500, url: `w${i}=http://127.0.0.1:${1000 + i}` }),
    );
    for (const s of scrapers) s.sut.start();
    await jest.advanceTimersByTimeAsync(2000);
    expect(maxInflight).toBe(2);
    // The fifth waited 600 ms for its turn, longer than the 500 ms deadline, and still succeeded.
    expect(adapters[4].starts[0]).toBe(600);
    const outcomes = scrapers.flatMap((s) => s.outcomes);
    expect(outcomes.length).toBeGreaterThan(5);
    expect(outcomes.every((o) => o.ok)).toBe(true);
    await Promise.all(scrapers.map((s) => s.sut.stop()));
    expect(slots.queued).toBe(0);
    const starts = adapters.map((a) => a.starts.length);
    await jest.advanceTimersByTimeAsync(2000);
    expect(adapters.map((a) => a.starts.length)).toEqual(starts);
  });

  it('computes the next tick on the grid, strictly after now', () => {
    expect(nextTick(1000, 250, 1100)).toBe(1250);
    expect(nextTick(1000, 250, 1250)).toBe(1500);
    expect(nextTick(1000, 250, 1251)).toBe(1500);
    expect(nextTick(1000, 250, 2999)).toBe(3000);
  });
});
