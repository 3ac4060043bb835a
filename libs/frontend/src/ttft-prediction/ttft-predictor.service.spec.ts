import { KvMetricsReport } from '@sluice/contracts';
import { parsedReport } from '@sluice/testkit';
import { FrontendConfig } from '../config/frontend-config';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import {
  DEFAULT_BATCH_TOKENS,
  SEED_FIRST_STEP_MS,
  SEED_FULL_KV_MS,
  SEED_FULL_STEP_MS,
} from './ttft-model';
import { TtftPredictor } from './ttft-predictor.service';

describe('TtftPredictor', () => {
  let registry: WorkerRegistry;
  let sut: TtftPredictor;

  const report = (id: string, over: Partial<KvMetricsReport> = {}): void => {
    registry.applyReport(parsedReport(id, over), 0);
  };
  const worker = (id: string) => registry.worker(id)!;

  beforeEach(() => {
    const config = new FrontendConfig();
    registry = new WorkerRegistry(config, new ThresholdsService(config));
    sut = new TtftPredictor(registry);
  });

  it('predicts nothing for a worker that is not live', () => {
    expect(sut.predict('nobody', 100)).toBeUndefined();
    sut.observe('nobody', 100, 0, 0, 50); // ignored, no error
  });

  it('seeds from the reported load and the reported step budget', () => {
    report('w1', { activePrefillTokens: 3000, maxNumBatchedTokens: 1000 });
    // 3000 tokens ahead + 1000 of its own at 1000 per step: four full steps after the first.
    expect(sut.predict('w1', 1000)).toEqual({
      ms: SEED_FIRST_STEP_MS + 4 * SEED_FULL_STEP_MS,
      basis: 'seed',
    });
    report('w2', { activePrefillTokens: 0 }); // no budget reported: the default
    expect(sut.predict('w2', DEFAULT_BATCH_TOKENS)?.ms).toBeCloseTo(
      SEED_FIRST_STEP_MS + SEED_FULL_STEP_MS,
    );
  });

  it('counts what this frontend sent since the report among the tokens ahead', () => {
    report('w1', { activePrefillTokens: 1000, maxNumBatchedTokens: 1000 });
    const before = sut.predict('w1', 0)!.ms;
    registry.reserve(worker('w1'), 2000, 0, Date.now());
    // Its 125 KV blocks fill the 100 of the worker's cache as well.
    expect(sut.predict('w1', 0)!.ms).toBeCloseTo(before + 2 * SEED_FULL_STEP_MS + SEED_FULL_KV_MS);
    expect(sut.view(worker('w1')).tokensAhead).toBe(3000);
  });

  it('adds the KV usage, reported and reserved since, as a full-KV decode step times it', () => {
    report('w1', { activeDecodeBlocks: 25, kvTotalBlocks: 100, maxNumBatchedTokens: 1000 });
    expect(sut.predict('w1', 0)?.ms).toBeCloseTo(SEED_FIRST_STEP_MS + 0.25 * SEED_FULL_KV_MS);
    // 400 prompt + 400 output tokens reserved: 50 more blocks of 16 tokens.
    registry.reserve(worker('w1'), 400, 400, Date.now());
    expect(worker('w1').judgedKvUsage()).toBe(0.75);
    expect(sut.view(worker('w1')).kvUsage).toBe(0.75);
    registry.reserve(worker('w1'), 800, 800, Date.now()); // over the cache: counted full
    expect(worker('w1').judgedKvUsage()).toBe(1);
  });

  it('learns from observed answers and says so', () => {
    report('w1', { maxNumBatchedTokens: 8192 });
    for (let i = 0; i < 30; i++) {
      const ahead = (i % 5) * 1000;
      const kv = (i % 3) / 4;
      // 10 ms + 50 ms per 1000 tokens + 80 ms at full KV use
      sut.observe('w1', 500, ahead, kv, 10 + (ahead + 500) * 0.05 + 80 * kv);
    }
    // The fit is pulled a little towards the seed (ttft-model.ts, SEED_WEIGHT): close, not exact.
    const off = (y: number | undefined, x: number): number => Math.abs((y ?? NaN) - x) / x;
    const prediction = sut.predict('w1', 1500);
    expect(prediction?.basis).toBe('learned');
    expect(off(prediction?.ms, 85)).toBeLessThanOrEqual(0.03);
    report('w1', { maxNumBatchedTokens: 8192, activeDecodeBlocks: 50 }); // half the KV in use
    expect(off(sut.predict('w1', 1500)?.ms, 125)).toBeLessThanOrEqual(0.03);
    const view = sut.view(worker('w1'));
    expect(off(view.baseMs, 10)).toBeLessThanOrEqual(0.3);
    expect(off(view.msPerUnit, 50)).toBeLessThanOrEqual(0.03);
    expect(off(view.msAtFullKv, 80)).toBeLessThanOrEqual(0.1);
    expect(view).toMatchObject({
      kvUsage: 0.5,
      observations: 30,
      basis: 'learned',
    });
  });

  it('tells how long a worker has gone without a first token checking its prediction', () => {
    report('w1');
    expect(sut.uncheckedForMs(worker('w1'))).toBe(Infinity);
    jest.useFakeTimers();
    try {
      sut.observe('w1', 500, 0, 0, 400);
      jest.advanceTimersByTime(250);
      expect(sut.uncheckedForMs(worker('w1'))).toBe(250);
    } finally {
      jest.useRealTimers();
    }
    report('w1', { endpoint: 'http://elsewhere:9001' }); // replaced: never checked
    expect(sut.uncheckedForMs(worker('w1'))).toBe(Infinity);
  });

  it('starts again from the seed for a worker that was replaced', () => {
    report('w1');
    sut.observe('w1', 500, 0, 0, 400);
    expect(sut.predict('w1', 500)?.basis).toBe('learned');
    report('w1', { endpoint: 'http://elsewhere:9001' });
    expect(sut.predict('w1', 500)?.basis).toBe('seed');
    expect(sut.view(worker('w1')).observations).toBe(0);
  });
});
