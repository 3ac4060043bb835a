import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { register } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { MonitorService } from './monitor.service';
import { WorkerRegistry } from './worker-registry.service';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { metricProviders } from '../metrics/metrics.providers';
import { workerMetricProviders } from './worker-metrics.providers';

const M = 'Qwen/Qwen3-0.6B';

/** The exposition lines of metrics starting with `prefix`, as a scrape would see them. */
async function scrape(prefix: string): Promise<string[]> {
  const text = await register.metrics();
  return text.split('\n').filter((l) => l.startsWith(prefix));
}

describe('monitor metrics', () => {
  let monitor: MonitorService;

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
        ...metricProviders,
        ...workerMetricProviders,
      ],
    }).compile();
    monitor = module.get(MonitorService);
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
});
