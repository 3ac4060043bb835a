import { parseKvMetricsReport } from '@sluice/contracts';
import { Registry } from 'prom-client';
import { metricSamples } from '@sluice/testkit';
import { BridgeLogger } from './bridge-logger';
import { EngineBridge } from './engine-bridge';
import { EngineBridgeOptions } from './engine-bridge.options';
import { EngineAdapter, EngineSnapshot } from './engines/engine-adapter';
import { ScrapeFailure } from './http/scrape-failure';

const quiet: BridgeLogger = { log: () => undefined, warn: () => undefined, error: () => undefined };
const SNAPSHOT: EngineSnapshot = {
  model: 'm',
  ranks: [
    { kvTotalBlocks: 100, activeDecodeBlocks: 10, numRequestsWaiting: 2 },
    { kvTotalBlocks: 100, activeDecodeBlocks: 90 },
  ],
};

/** An engine whose answer the test sets: a snapshot, or a failure. */
class ScriptedAdapter implements EngineAdapter {
  readonly engine = 'vllm' as const;
  answer: EngineSnapshot | ScrapeFailure = SNAPSHOT;
  scrapes = 0;
  scrape(): Promise<EngineSnapshot> {
    this.scrapes++;
    const a = this.answer;
    return a instanceof ScrapeFailure ? Promise.reject(a) : Promise.resolve(a);
  }
}

interface Published {
  subject: string;
  payload: Record<string, unknown>;
}

function setup(overrides: Partial<EngineBridgeOptions> = {}) {
  const published: Published[] = [];
  const adapter = new ScriptedAdapter();
  const registry = new Registry();
  const sut = new EngineBridge({
    engine: 'vllm',
    namespace: 'ns',
    targets: ['w1=http://127.0.0.1:9'],
    publisher: {
      publish: (subject, payload) =>
        published.push({ subject, payload: payload as Record<string, unknown> }),
    },
    registry,
    adapter,
    logger: quiet,
    now: () => Date.now(),
    // Every first scrape at offset 0 of its interval, unless a test spreads them.
    random: () => 0,
    source: 'bridge vllm test:1',
    ...overrides,
  });
  const reports = () =>
    published.filter((p) => p.subject === 'namespace.ns.kv_metrics').map((p) => p.payload);
  const downs = () =>
    published
      .filter((p) => p.subject === 'namespace.ns.worker_down')
      .map((p) => p.payload.worker_id);
  return { sut, adapter, registry, published, reports, downs };
}

describe('EngineBridge', () => {
  beforeEach(() =>
    jest.useFakeTimers({
      now: 1_764_000_000_000,
      doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'],
    }),
  );
  afterEach(() => jest.useRealTimers());

  it('publishes one contract-valid report per rank, with seq increasing per rank', async () => {
    const { sut, reports } = setup({ maxNumBatchedTokens: 8192, model: 'override' });
    await sut.start();
    await jest.advanceTimersByTimeAsync(600);
    await sut.stop();
    const all = reports();
    expect(all.length).toBeGreaterThanOrEqual(6);
    for (const r of all) expect(parseKvMetricsReport(r).ok).toBe(true);
    expect(all[0]).toEqual({
      worker_id: 'w1',
      model: 'override',
      endpoint: 'http://127.0.0.1:9',
      dp_rank: 0,
      dp_size: 2,
      active_decode_blocks: 10,
      kv_total_blocks: 100,
      num_requests_waiting: 2,
      max_num_batched_tokens: 8192,
      timestamp_ms: 1_764_000_000_000,
      seq: 0,
      source: 'bridge vllm test:1',
    });
    for (const rank of [0, 1]) {
      const seqs = all.filter((r) => r.dp_rank === rank).map((r) => r.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i));
    }
  });

  it('publishes worker_down once after down-after-ms without an answer, and resumes reports', async () => {
    const { sut, adapter, reports, downs, registry } = setup({ downAfterMs: 3000 });
    await sut.start();
    await jest.advanceTimersByTimeAsync(0);
    const before = reports().length;
    adapter.answer = new ScrapeFailure('error', 'ECONNREFUSED');
    await jest.advanceTimersByTimeAsync(2500);
    expect(downs()).toEqual([]);
    expect(sut.status()[0].up).toBe(true);
    await jest.advanceTimersByTimeAsync(1000);
    expect(downs()).toEqual(['w1']);
    await jest.advanceTimersByTimeAsync(5000);
    expect(downs()).toEqual(['w1']);
    expect(reports().length).toBe(before);
    expect(sut.status()[0]).toMatchObject({ up: false, state: 'down', lastResult: 'error' });
    const lastSeq = reports().at(-1)?.seq as number;

    adapter.answer = SNAPSHOT;
    await jest.advanceTimersByTimeAsync(300);
    expect(reports().length).toBeGreaterThan(before);
    expect(reports().at(-1)?.seq).toBeGreaterThan(lastSeq);
    expect(sut.status()[0].up).toBe(true);
    const text = await registry.metrics();
    expect(
      metricSamples(text, 'sluice_bridge_scrapes_total', { worker_id: 'w1', result: 'error' })[0],
    ).toBeGreaterThan(10);
    await sut.stop();
    expect(downs()).toEqual(['w1', 'w1']);
  });

  it('counts a snapshot without a model as unparsable and publishes nothing', async () => {
    const { sut, adapter, reports, registry } = setup();
    adapter.answer = { model: undefined, ranks: SNAPSHOT.ranks };
    await sut.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(reports()).toEqual([]);
    const text = await registry.metrics();
    expect(
      metricSamples(text, 'sluice_bridge_scrapes_total', { worker_id: 'w1', result: 'unparsable' }),
    ).toEqual([1]);
    await sut.stop();
  });

  it('scrapes one target at a time: a slow answer delays the next scrape to the next tick', async () => {
    const { sut, adapter } = setup({ scrapeIntervalMs: 100, scrapeTimeoutMs: 10_000 });
    let release: () => void = () => undefined;
    let inflight = 0;
    let maxInflight = 0;
    adapter.scrape = () => {
      adapter.scrapes++;
      inflight++;
      maxInflight = Math.max(maxInflight, inflight);
      return new Promise((resolve) => {
        release = () => {
          inflight--;
          resolve(SNAPSHOT);
        };
      });
    };
    await sut.start();
    await jest.advanceTimersByTimeAsync(1000);
    expect(adapter.scrapes).toBe(1);
    release();
    // The scrape ended at 1000 ms, on a tick of the 100 ms grid: that tick is skipped.
    await jest.advanceTimersByTimeAsync(99);
    expect(adapter.scrapes).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(adapter.scrapes).toBe(2);
    expect(maxInflight).toBe(1);
    release();
    await sut.stop();
  });

  it('times a scrape out at scrape-timeout-ms even when the adapter never settles', async () => {
    const { sut, adapter, registry } = setup({ scrapeTimeoutMs: 500 });
    adapter.scrape = () => new Promise(() => undefined);
    await sut.start();
    // Scrapes start at 0, 750 and 1500 ms (the tick after each timeout), time out 500 ms later.
    await jest.advanceTimersByTimeAsync(2100);
    const text = await registry.metrics();
    expect(
      metricSamples(text, 'sluice_bridge_scrapes_total', { worker_id: 'w1', result: 'timeout' })[0],
    ).toBeGreaterThanOrEqual(3);
    await sut.stop();
  });

  it('reports the age of the newest report at collect time, and removes series on stop', async () => {
    const { sut, adapter, registry } = setup();
    await sut.start();
    await jest.advanceTimersByTimeAsync(0);
    adapter.answer = new ScrapeFailure('timeout', 'slow');
    await jest.advanceTimersByTimeAsync(2000);
    const age = metricSamples(await registry.metrics(), 'sluice_bridge_report_age_seconds', {
      worker_id: 'w1',
    });
    expect(age[0]).toBeGreaterThanOrEqual(1.5);
    await sut.stop();
    expect(await registry.metrics()).not.toMatch(/worker_id="w1"/);
  });

  it('follows a DNS name: new addresses are scraped, vanished ones get worker_down', async () => {
    let answer: string[] | Error = ['10.0.0.2', '10.0.0.1'];
    const resolver = jest.fn((name: string) => {
      expect(name).toBe('engines.local');
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    });
    const { sut, downs, registry } = setup({
      targets: [],
      dnsTargets: ['engines.local:8000'],
      resolver,
      dnsIntervalMs: 5000,
    });
    await sut.start();
    await jest.advanceTimersByTimeAsync(0);
    const ids = () =>
      sut
        .status()
        .map((s) => s.workerId)
        .sort();
    expect(ids()).toEqual(['10.0.0.1:8000', '10.0.0.2:8000']);
    expect(sut.status().find((s) => s.workerId === '10.0.0.1:8000')?.url).toBe(
      'http://10.0.0.1:8000',
    );

    answer = ['10.0.0.2', '10.0.0.3'];
    await jest.advanceTimersByTimeAsync(5000);
    expect(ids()).toEqual(['10.0.0.2:8000', '10.0.0.3:8000']);
    expect(downs()).toEqual(['10.0.0.1:8000']);
    expect(await registry.metrics()).not.toMatch(/worker_id="10\.0\.0\.1:8000"/);

    answer = Object.assign(new Error('timeout'), { code: 'EAI_AGAIN' });
    await jest.advanceTimersByTimeAsync(5000);
    expect(ids()).toEqual(['10.0.0.2:8000', '10.0.0.3:8000']);

    answer = Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    await jest.advanceTimersByTimeAsync(5000);
    expect(ids()).toEqual([]);
    expect(resolver.mock.calls.length).toBe(4);
    await sut.stop();
  });

  it('says once per worker what its engine cannot tell: in the log, the metric and the status', async () => {
    const warnings: string[] = [];
    const logger = { ...quiet, warn: (m: string) => warnings.push(m) };
    const { sut, adapter, registry, reports } = setup({ logger });
    const gap = { gap: 'kv_blocks' as const, reason: 'num_gpu_blocks is "None"' };
    adapter.answer = {
      model: 'm',
      ranks: [{ kvTotalBlocks: 0, activeDecodeBlocks: 0, numRequestsWaiting: 5 }],
      gaps: [gap],
    };
    const gapValue = async (kind: string) =>
      metricSamples(await registry.metrics(), 'sluice_bridge_signal_gap', {
        worker_id: 'w1',
        gap: kind,
      })[0];
    await sut.start();
    await jest.advanceTimersByTimeAsync(1000);
    expect(reports().at(-1)).toMatchObject({ kv_total_blocks: 0, num_requests_waiting: 5 });
    expect(warnings.filter((w) => w.includes('num_gpu_blocks'))).toEqual([
      'worker w1 at http://127.0.0.1:9 cannot tell its kv_blocks: num_gpu_blocks is "None"',
    ]);
    expect(await gapValue('kv_blocks')).toBe(1);
    expect(await gapValue('freshness')).toBe(0);
    expect(sut.status()[0].signalGaps).toEqual([gap]);

    adapter.answer = SNAPSHOT; // the engine was upgraded
    await jest.advanceTimersByTimeAsync(500);
    expect(await gapValue('kv_blocks')).toBe(0);
    expect(sut.status()[0].signalGaps).toEqual([]);
    await sut.stop();
    expect(await registry.metrics()).not.toMatch(/sluice_bridge_signal_gap\{/);
  });

  it('stop() clears every timer', async () => {
    const { sut, adapter } = setup({
      dnsTargets: ['engines.local:8000'],
      resolver: () => Promise.resolve(['10.0.0.9']),
    });
    await sut.start();
    await jest.advanceTimersByTimeAsync(300);
    await sut.stop();
    const scrapes = adapter.scrapes;
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(adapter.scrapes).toBe(scrapes);
  });
});
