import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { KvMetricsReport } from '@sluice/contracts';
import { parsedReport } from '@sluice/testkit';
import { register } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { MAX_EMPTY_MODELS, WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { metricProviders } from '../metrics/metrics.providers';
import { RequestMetricsService } from './request-metrics.service';
import { HISTORY_BUCKET_MS, TrafficHistory } from './traffic-history';

const report = (workerId: string, model: string): KvMetricsReport =>
  parsedReport(workerId, { model, activeDecodeBlocks: 10 });

/** Exposition lines that carry `model="<model>"`. */
async function seriesOf(model: string): Promise<string[]> {
  return (await register.metrics()).split('\n').filter((l) => l.includes(`model="${model}"`));
}

describe('RequestMetricsService', () => {
  let registry: WorkerRegistry;
  let history: TrafficHistory;
  let sut: RequestMetricsService;
  let now: number;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(async () => {
    register.clear();
    now = 1000 * HISTORY_BUCKET_MS;
    const module = await Test.createTestingModule({
      providers: [
        { provide: FrontendConfig, useValue: new FrontendConfig() },
        ThresholdsService,
        WorkerRegistry,
        RequestMetricsService,
        { provide: TrafficHistory, useFactory: () => new TrafficHistory(() => now) },
        ...metricProviders,
      ],
    }).compile();
    await module.init();
    registry = module.get(WorkerRegistry);
    history = module.get(TrafficHistory);
    sut = module.get(RequestMetricsService);
  });
  afterAll(() => register.clear());

  /** A model with one worker and every per-model series written once. */
  function useModel(model: string, worker: string): void {
    registry.applyReport(report(worker, model), 0);
    sut.rejected(model, 'chat_completions', 'sheddable');
    sut.answered(model, 'chat_completions', false, '');
    sut.answered(model, 'completions', true, 'overload');
    sut.firstByte(model, 0.1);
    sut.finished(model, 0.2);
    sut.inflight.inc({ model });
    sut.inflight.dec({ model });
    sut.queued.set({ model }, 0);
  }

  it('counts a rejection in the docs/metrics.md counter and, by priority class, in the docs/security.md#priority-classes-who-may-set-x-sluice-priority one', async () => {
    registry.applyReport(report('w1', 'm'), 0);
    sut.rejected('m', 'completions', 'sheddable');
    sut.rejected('m', 'completions', 'sheddable');
    sut.rejected('m', 'completions', 'critical');
    const lines = await seriesOf('m');
    expect(lines).toContain(
      'dynamo_frontend_model_rejection_total{model="m",endpoint="completions"} 3',
    );
    expect(lines).toContain(
      'sluice_frontend_rejection_total{model="m",endpoint="completions",priority="sheddable"} 2',
    );
    expect(lines).toContain(
      'sluice_frontend_rejection_total{model="m",endpoint="completions",priority="critical"} 1',
    );
  });

  it("removes a forgotten model's series and keeps the others", async () => {
    useModel('gone', 'w-gone');
    useModel('kept', 'w-kept');
    expect((await seriesOf('gone')).length).toBeGreaterThan(10);
    registry.removeWorker('w-gone', 'worker_down');
    expect((await seriesOf('gone')).length).toBeGreaterThan(10); // remembered while empty
    for (let i = 0; i < MAX_EMPTY_MODELS; i++) {
      registry.applyReport(report(`w${i}`, `filler-${i}`), 0);
      registry.removeWorker(`w${i}`, 'worker_down');
    }
    await new Promise((r) => setImmediate(r));
    expect(registry.model('gone')).toBeUndefined();
    expect(await seriesOf('gone')).toEqual([]);
    expect((await seriesOf('kept')).length).toBeGreaterThan(10);
  });

  it('records admitted and rejected requests by class in the history, until the model is forgotten', () => {
    useModel('gone', 'w-gone');
    useModel('kept', 'w-kept');
    history.sample('gone', 0, null);
    history.sample('kept', 0, null);
    sut.admitted('gone');
    sut.rejected('gone', 'completions', 'sheddable');
    sut.rejected('gone', 'completions', 'sheddable');
    now += HISTORY_BUCKET_MS;
    expect(history.window('gone')).toMatchObject({
      admitted: [0.2],
      rejected: { critical: [0], standard: [0], sheddable: [0.4] },
    });
    expect(history.window('kept')).toMatchObject({ admitted: [0] });

    registry.removeWorker('w-gone', 'worker_down');
    for (let i = 0; i < MAX_EMPTY_MODELS; i++) {
      registry.applyReport(report(`w${i}`, `filler-${i}`), 0);
      registry.removeWorker(`w${i}`, 'worker_down');
    }
    expect(history.window('gone')).toBeUndefined();
    expect(history.window('kept')).toBeDefined();
  });

  it('keeps the in-flight gauge of a forgotten model while requests are still running', async () => {
    useModel('busy', 'w-busy');
    sut.inflight.inc({ model: 'busy' });
    registry.removeWorker('w-busy', 'worker_down');
    for (let i = 0; i < MAX_EMPTY_MODELS; i++) {
      registry.applyReport(report(`w${i}`, `filler-${i}`), 0);
      registry.removeWorker(`w${i}`, 'worker_down');
    }
    await new Promise((r) => setImmediate(r));
    expect(await seriesOf('busy')).toEqual(['dynamo_frontend_inflight_requests{model="busy"} 1']);
  });
});
