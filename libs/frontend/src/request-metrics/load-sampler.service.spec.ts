import { Logger } from '@nestjs/common';
import { KvMetricsReport } from '@sluice/contracts';
import { parsedReport } from '@sluice/testkit';
import { FrontendConfig } from '../config/frontend-config';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { LoadSampler } from './load-sampler.service';
import { HISTORY_BUCKET_MS, HISTORY_BUCKETS, TrafficHistory } from './traffic-history';

const M = 'Qwen/Qwen3-0.6B';

const report = (workerId: string, used: number, over: Partial<KvMetricsReport> = {}) =>
  parsedReport(workerId, { model: M, activeDecodeBlocks: used, ...over });

describe('LoadSampler', () => {
  let now: number;
  let registry: WorkerRegistry;
  let history: TrafficHistory;
  let sut: LoadSampler;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    now = 1000 * HISTORY_BUCKET_MS;
    const config = new FrontendConfig({
      thresholds: {
        activeDecodeBlocks: 0.8,
        activePrefillTokens: null,
        activePrefillTokensFrac: null,
      },
    });
    registry = new WorkerRegistry(config, new ThresholdsService(config));
    history = new TrafficHistory(() => now);
    sut = new LoadSampler(registry, history);
  });

  it("samples the share of busy workers and the mean KV usage over the model's ranks", () => {
    registry.applyReport(report('busy', 90), 0); // busy: 0.9 > 0.8
    registry.applyReport(report('free', 10, { dpSize: 2 }), 0);
    registry.applyReport(report('free', 30, { dpSize: 2, dpRank: 1, kvTotalBlocks: 50 }), 0);
    registry.applyReport(report('empty', 0, { kvTotalBlocks: 0 }), 0); // no KV size: not counted
    sut.sample();
    now += HISTORY_BUCKET_MS;
    const w = history.window(M);
    expect(w?.busyShare).toEqual([1 / 3]);
    expect(w?.kvUsage?.[0]).toBeCloseTo((0.9 + 0.1 + 0.6) / 3, 10);
  });

  it('samples no KV usage when no rank reports its size, and nothing for a model without workers', () => {
    registry.applyReport(report('w', 0, { kvTotalBlocks: 0 }), 0);
    registry.applyReport(report('gone', 5, { model: 'other' }), 0);
    registry.removeWorker('gone', 'worker_down');
    sut.sample();
    now += HISTORY_BUCKET_MS;
    expect(history.window(M)).toMatchObject({ busyShare: [0], kvUsage: [null] });
    expect(history.window('other')).toBeUndefined();
  });

  it('drops the history of a model whose workers went away once a whole window is idle', () => {
    registry.applyReport(report('w', 10), 0);
    sut.sample();
    registry.removeWorker('w', 'worker_down');
    now += HISTORY_BUCKETS * HISTORY_BUCKET_MS;
    sut.sample();
    expect(history.window(M)?.busyShare[0]).toBe(0);
    now += HISTORY_BUCKET_MS;
    sut.sample();
    expect(history.window(M)).toBeUndefined();
  });
});
