import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { KvMetricsReport } from '@sluice/contracts';
import { register } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { MonitorService } from './monitor.service';
import { WorkerRegistry } from './worker-registry.service';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { metricProviders } from '../metrics/metrics.providers';
import { workerMetricProviders } from './worker-metrics.providers';

const M = 'Qwen/Qwen3-0.6B';

const report = (workerId: string, over: Partial<KvMetricsReport> = {}): KvMetricsReport => ({
  workerId,
  model: M,
  endpoint: `http://${workerId}:9001`,
  dpRank: 0,
  dpSize: 1,
  activeDecodeBlocks: 10,
  kvTotalBlocks: 100,
  activePrefillTokens: 5,
  maxNumBatchedTokens: undefined,
  timestampMs: undefined,
  numRequestsWaiting: undefined,
  seq: undefined,
  ...over,
});

/** The exposition lines of metrics starting with `prefix`, as a scrape would see them. */
async function scrape(prefix = 'dynamo_frontend_worker_'): Promise<string[]> {
  const text = await register.metrics();
  return text.split('\n').filter((l) => l.startsWith(prefix));
}

describe('monitor metrics', () => {
  let sut: WorkerRegistry;
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
    sut = module.get(WorkerRegistry);
    monitor = module.get(MonitorService);
  });

  afterAll(() => register.clear());

  it('shows each reported rank and the busy state of each worker, read at scrape time', async () => {
    sut.applyReport(report('w1', { dpSize: 2, dpRank: 1, activeDecodeBlocks: 95 }), 0);
    sut.applyReport(report('w2', { activeDecodeBlocks: 91, activePrefillTokens: 7 }), 0);
    expect(await scrape()).toEqual([
      `dynamo_frontend_worker_active_decode_blocks{model="${M}",worker_id="w1",dp_rank="1"} 95`,
      `dynamo_frontend_worker_active_decode_blocks{model="${M}",worker_id="w2",dp_rank="0"} 91`,
      `dynamo_frontend_worker_kv_total_blocks{model="${M}",worker_id="w1",dp_rank="1"} 100`,
      `dynamo_frontend_worker_kv_total_blocks{model="${M}",worker_id="w2",dp_rank="0"} 100`,
      `dynamo_frontend_worker_active_prefill_tokens{model="${M}",worker_id="w1",dp_rank="1"} 5`,
      `dynamo_frontend_worker_active_prefill_tokens{model="${M}",worker_id="w2",dp_rank="0"} 7`,
      `dynamo_frontend_worker_busy{model="${M}",worker_id="w1"} 0`,
      `dynamo_frontend_worker_busy{model="${M}",worker_id="w2"} 1`,
    ]);
  });

  it('shows the latest report of a rank', async () => {
    sut.applyReport(report('w1', { activeDecodeBlocks: 95 }), 0);
    await scrape();
    sut.applyReport(report('w1', { activeDecodeBlocks: 20 }), 0);
    const lines = await scrape();
    expect(lines).toContain(
      `dynamo_frontend_worker_active_decode_blocks{model="${M}",worker_id="w1",dp_rank="0"} 20`,
    );
    expect(lines).toContain(`dynamo_frontend_worker_busy{model="${M}",worker_id="w1"} 0`);
  });

  it("drops a forgotten worker's series and keeps the others", async () => {
    sut.applyReport(report('w1'), 0);
    sut.applyReport(report('w2'), 0);
    expect(await scrape()).toHaveLength(8);
    sut.removeWorker('w1', 'worker_down');
    const lines = await scrape();
    expect(lines).toHaveLength(4);
    expect(lines.filter((l) => l.includes('worker_id="w1"'))).toEqual([]);
  });

  it('shows the requests waiting of each rank that reports them, and no series for one that does not', async () => {
    sut.applyReport(report('w1', { dpSize: 2, dpRank: 0, numRequestsWaiting: 3 }), 0);
    sut.applyReport(report('w1', { dpSize: 2, dpRank: 1, numRequestsWaiting: 0 }), 0);
    sut.applyReport(report('w2'), 0);
    expect(await scrape('sluice_frontend_worker_requests_waiting')).toEqual([
      `sluice_frontend_worker_requests_waiting{model="${M}",worker_id="w1",dp_rank="0"} 3`,
      `sluice_frontend_worker_requests_waiting{model="${M}",worker_id="w1",dp_rank="1"} 0`,
    ]);
    // A rank that stops reporting the field loses its series at the next scrape.
    sut.applyReport(report('w1', { dpSize: 2, dpRank: 0 }), 0);
    expect(await scrape('sluice_frontend_worker_requests_waiting')).toEqual([
      `sluice_frontend_worker_requests_waiting{model="${M}",worker_id="w1",dp_rank="1"} 0`,
    ]);
    sut.removeWorker('w1', 'worker_down');
    expect(await scrape('sluice_frontend_worker_requests_waiting')).toEqual([]);
  });

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
