import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { register } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { MonitorService } from './monitor.service';
import { WorkerRegistry } from './worker-registry.service';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { metricProviders } from '../metrics/metrics.providers';
import { workerMetricProviders } from './worker-metrics.providers';
import { BusyTransitionsCounter } from './busy-transitions.counter';

const M = 'Qwen/Qwen3-0.6B';

/** The exposition lines of metrics starting with `prefix`, as a scrape would see them. */
async function scrape(prefix: string): Promise<string[]> {
  const text = await register.metrics();
  return text.split('\n').filter((l) => l.startsWith(prefix));
}

describe('monitor metrics', () => {
  let monitor: MonitorService;
  let registry: WorkerRegistry;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  beforeEach(async () => {
    register.clear();
    const config = new FrontendConfig({
      thresholds: {
        activeDecodeBlocks: 0.9,
        activePrefillTokens: null,
        activePrefillTokensFrac: null,
      },
    });
    const module = await Test.createTestingModule({
      providers: [
        { provide: FrontendConfig, useValue: config },
        ThresholdsService,
        WorkerRegistry,
        MonitorService,
        BusyTransitionsCounter,
        ...metricProviders,
        ...workerMetricProviders,
      ],
    }).compile();
    monitor = module.get(MonitorService);
    registry = module.get(WorkerRegistry);
    module.get(BusyTransitionsCounter);
  });

  afterAll(() => register.clear());

  it('counts every kv_metrics report received, the malformed ones too', async () => {
    const wire = { worker_id: 'w1', model: M, endpoint: 'http://w1:9001' };
    monitor.onKvMetrics({
      ...wire,
      active_decode_blocks: 1,
      kv_total_blocks: 2,
      active_prefill_tokens: 0,
    });
    monitor.onKvMetrics({ ...wire, active_decode_blocks: -1 });
    monitor.onKvMetrics('not json');
    expect(await scrape('sluice_frontend_kv_metrics_received_total')).toEqual([
      'sluice_frontend_kv_metrics_received_total 3',
    ]);
    expect(await scrape('dynamo_frontend_kv_metrics_invalid_total')).toEqual([
      'dynamo_frontend_kv_metrics_invalid_total 2',
    ]);
  });

  it('counts busy and free transitions of workers per model, from 0 at the first report', async () => {
    const report = (id: string, used: number) =>
      monitor.onKvMetrics({
        worker_id: id,
        model: M,
        endpoint: `http://${id}:9001`,
        active_decode_blocks: used,
        kv_total_blocks: 100,
      });
    const transitions = () => scrape('sluice_frontend_worker_busy_transitions_total{');
    report('w1', 10);
    expect(await transitions()).toEqual([
      `sluice_frontend_worker_busy_transitions_total{model="${M}"} 0`,
    ]);
    for (const used of [95, 96, 10, 95]) report('w1', used);
    report('w2', 95);
    expect(await transitions()).toEqual([
      `sluice_frontend_worker_busy_transitions_total{model="${M}"} 4`,
    ]);
    // The series goes with the model: its workers gone, and beyond the empty models remembered.
    registry.removeWorker('w1', 'worker_down');
    registry.removeWorker('w2', 'worker_down');
    for (let i = 0; i <= 1000; i++) {
      monitor.onKvMetrics({
        worker_id: `x${i}`,
        model: `other-${i}`,
        endpoint: `http://x${i}:9001`,
        active_decode_blocks: 0,
        kv_total_blocks: 100,
      });
      registry.removeWorker(`x${i}`, 'worker_down');
    }
    expect((await transitions()).filter((l) => l.includes(M))).toEqual([]);
  });
});
