import { Logger } from '@nestjs/common';
import { KvMetricsReport } from '@sluice/contracts';
import { parsedReport } from '@sluice/testkit';
import { FrontendConfig } from '../config/frontend-config';
import { OutlierEjection } from '../worker-monitor/outlier-ejection';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { WorkerTraffic } from '../completions/routing/worker-traffic';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { TtftPredictor } from '../ttft-prediction/ttft-predictor.service';
import { RejectionRateService } from './rejection-rate.service';
import { STATUS_LIMITS, StatusService } from './status.service';
import { TenantStatus } from './tenant-status.service';

const M = 'Qwen/Qwen3-0.6B';

const report = (workerId: string, used: number, over: Partial<KvMetricsReport> = {}) =>
  parsedReport(workerId, { model: M, activeDecodeBlocks: used, ...over });

describe('StatusService', () => {
  let registry: WorkerRegistry;
  let thresholds: ThresholdsService;
  let traffic: WorkerTraffic;
  let sut: StatusService;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    const config = new FrontendConfig({
      admissionControl: 'token-capacity',
      thresholds: {
        activeDecodeBlocks: 0.8,
        activePrefillTokens: null,
        activePrefillTokensFrac: 0.5,
      },
    });
    thresholds = new ThresholdsService(config);
    registry = new WorkerRegistry(config, thresholds);
    const rates = { perSecond: () => 1.5, total: () => 7 } as unknown as RejectionRateService;
    traffic = new WorkerTraffic();
    sut = new StatusService(
      config,
      registry,
      thresholds,
      rates,
      traffic,
      new TtftPredictor(registry),
      new OutlierEjection(config, registry, { inc: () => undefined } as never),
      { snapshot: () => null } as unknown as TenantStatus,
    );
  });

  it('shows per priority class how many workers are free for it, and whether it is refused', () => {
    // Decode threshold 0.8: sheddable 0.64, critical 0.96.
    registry.applyReport(report('a', 97), 0);
    registry.applyReport(report('b', 70), 0);
    expect(sut.snapshot(1000).models[0].priority_classes).toEqual({
      critical: { workers_free: 1, all_busy: false },
      standard: { workers_free: 1, all_busy: false },
      sheddable: { workers_free: 0, all_busy: true },
    });
    registry.applyReport(report('a', 90), 0);
    expect(sut.snapshot(1000).models[0].priority_classes.critical.workers_free).toBe(2);
  });

  it('shows each worker with its busy state, KV usage and the effective thresholds', () => {
    registry.applyReport(report('b', 10), 500);
    registry.applyReport(report('a', 95), 800);
    const s = sut.snapshot(1000);
    expect(s.admission_control).toBe('token-capacity');
    const [m] = s.models;
    expect(m).toMatchObject({
      model: M,
      active_decode_blocks_threshold: 0.8,
      active_prefill_tokens_threshold: null,
      active_prefill_tokens_threshold_frac: 0.5,
      waiting_requests_threshold: null,
      all_busy: false,
      rejections_per_second: 1.5,
      rejections_total: 7,
      workers_total: 2,
      workers_busy: 1,
    });
    expect(m.workers.map((w) => [w.worker_id, w.busy, w.last_report_age_ms])).toEqual([
      ['a', true, 200],
      ['b', false, 500],
    ]);
    expect(m.workers[0].ranks[0]).toMatchObject({ kv_usage: 0.95, kv_over_threshold: true });
    expect(m.workers[1].ranks[0]).toMatchObject({ kv_usage: 0.1, kv_over_threshold: false });
  });

  it('says which threshold fires on a rank, and where the prefill limit is', () => {
    registry.applyReport(
      report('p', 10, { activePrefillTokens: 600, maxNumBatchedTokens: 1000 }),
      0,
    );
    const rank = sut.snapshot(0).models[0].workers[0].ranks[0];
    expect(rank).toMatchObject({
      kv_over_threshold: false,
      prefill_over_threshold: true,
      prefill_limit_tokens: 500,
      busy: true,
    });
  });

  it('shows the waiting-requests threshold and each rank’s waiting count, and when it fires', () => {
    thresholds.setOverride(M, { waitingRequests: 2 });
    registry.applyReport(report('q', 10, { numRequestsWaiting: 3 }), 0);
    registry.applyReport(report('r', 10, { numRequestsWaiting: 2 }), 0);
    registry.applyReport(report('s', 10), 0);
    const [m] = sut.snapshot(0).models;
    expect(m.waiting_requests_threshold).toBe(2);
    expect(m.workers.map((w) => [w.worker_id, w.busy, w.ranks[0]])).toEqual([
      [
        'q',
        true,
        expect.objectContaining({ num_requests_waiting: 3, waiting_over_threshold: true }),
      ],
      [
        'r',
        false,
        expect.objectContaining({ num_requests_waiting: 2, waiting_over_threshold: false }),
      ],
      [
        's',
        false,
        expect.objectContaining({ num_requests_waiting: null, waiting_over_threshold: false }),
      ],
    ]);
    expect(m.workers[0].ranks[0]).toMatchObject({
      kv_over_threshold: false,
      prefill_over_threshold: false,
    });
  });

  it('lists a rank that has not reported as unreported, not as idle', () => {
    registry.applyReport(report('dp', 95, { dpSize: 2 }), 0);
    const [w] = sut.snapshot(0).models[0].workers;
    expect(w.busy).toBe(false);
    expect(w.ranks.map((r) => [r.reported, r.busy])).toEqual([
      [true, true],
      [false, false],
    ]);
  });

  it('counts in-flight requests of every worker of the model', () => {
    registry.applyReport(report('a', 10), 0);
    registry.applyReport(report('b', 10), 0);
    traffic.of(registry.model(M)!.workers.get('a')!).requests = 2;
    traffic.of(registry.model(M)!.workers.get('b')!).requests = 3;
    expect(sut.snapshot(0).models[0].inflight_requests).toBe(5);
  });

  it('counts rather than lists the workers past the rank budget', () => {
    const dpSize = 1000;
    const n = Math.floor(STATUS_LIMITS.maxRanksListed / dpSize) + 2;
    for (let i = 0; i < n; i++) registry.applyReport(report(`w${i}`, 1, { dpSize }), 0);
    const [m] = sut.snapshot(0).models;
    expect(m.workers_total).toBe(n);
    expect(m.workers.length).toBe(n - 2);
    expect(m.workers_omitted).toBe(2);
  });

  it('keeps a model whose workers are gone, with its stored thresholds', () => {
    thresholds.setOverride('other', { activeDecodeBlocks: 0.3 });
    const s = sut.snapshot(0);
    expect(s.models).toEqual([
      expect.objectContaining({ model: 'other', active_decode_blocks_threshold: 0.3, workers: [] }),
    ]);
  });

  it("shows how old each worker's load is, who reports it, and where its prefill comes from", () => {
    registry.applyReport(
      report('bridged', 10, {
        timestampMs: 700,
        source: 'bridge vllm b-1:7',
        activePrefillTokens: undefined,
      }),
      900,
    );
    registry.applyReport(report('direct', 10), 950);
    const [m] = sut.snapshot(1000).models;
    const [bridged, direct] = m.workers;
    expect(bridged).toMatchObject({
      worker_id: 'bridged',
      last_report_age_ms: 100,
      report_measured_age_ms: 300,
      report_source: 'bridge vllm b-1:7',
    });
    expect(bridged.ranks[0].prefill_source).toBe('frontend');
    expect(direct).toMatchObject({ report_measured_age_ms: 50, report_source: null });
    expect(direct.ranks[0].prefill_source).toBe('reported');
  });
});
