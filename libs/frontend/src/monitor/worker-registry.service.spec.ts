import { Logger } from '@nestjs/common';
import { KvMetricsReport } from '@sluice/contracts';
import { FrontendConfig } from '../config/frontend-config';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { ModelEntry } from './worker-entry';
import { RegistryObserver, WorkerRegistry } from './worker-registry.service';

const M = 'Qwen/Qwen3-0.6B';
const BUSY = 95;
const FREE = 10;

/** A report whose decode usage is `used` of 100 blocks (the threshold below is 0.9). */
const report = (workerId: string, used: number, over: Partial<KvMetricsReport> = {}) => ({
  workerId,
  model: M,
  endpoint: `http://${workerId}:9001`,
  dpRank: 0,
  dpSize: 1,
  activeDecodeBlocks: used,
  kvTotalBlocks: 100,
  activePrefillTokens: 0,
  maxNumBatchedTokens: undefined,
  timestampMs: undefined,
  numRequestsWaiting: undefined,
  seq: undefined,
  ...over,
});

const freeIds = (m: ModelEntry | undefined): string[] => (m?.free ?? []).map((w) => w.id).sort();

describe('WorkerRegistry', () => {
  let thresholds: ThresholdsService;
  let observer: jest.Mocked<RegistryObserver>;
  let sut: WorkerRegistry;

  const build = (over: Partial<FrontendConfig> = {}): WorkerRegistry => {
    const config = new FrontendConfig({
      thresholds: {
        activeDecodeBlocks: 0.9,
        activePrefillTokens: null,
        activePrefillTokensFrac: null,
      },
      workerTtlMs: 1000,
      ...over,
    });
    thresholds = new ThresholdsService(config);
    const registry = new WorkerRegistry(config, thresholds);
    observer = { rankUpdated: jest.fn(), busyChanged: jest.fn(), workerRemoved: jest.fn() };
    registry.observe(observer);
    return registry;
  };

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    sut = build();
  });

  it('lists a reporting worker as a free worker of its model', () => {
    expect(sut.applyReport(report('w1', FREE), 0)).toBe(true);
    expect(sut.modelNames()).toEqual([M]);
    expect(freeIds(sut.model(M))).toEqual(['w1']);
    expect(sut.model(M)?.allBusy).toBe(false);
    expect(observer.rankUpdated).toHaveBeenCalledWith(expect.objectContaining({ id: 'w1' }), 0, {
      activeDecodeBlocks: FREE,
      kvTotalBlocks: 100,
      activePrefillTokens: 0,
      maxNumBatchedTokens: undefined,
      busy: false,
    });
  });

  it('marks a dp_size 2 worker busy only when both ranks are busy', () => {
    sut.applyReport(report('w1', BUSY, { dpSize: 2, dpRank: 0 }), 0);
    expect(sut.model(M)?.workers.get('w1')?.busy).toBe(false); // rank 1 has not reported
    expect(sut.model(M)?.allBusy).toBe(false);

    sut.applyReport(report('w1', FREE, { dpSize: 2, dpRank: 1 }), 0);
    expect(sut.model(M)?.allBusy).toBe(false);

    sut.applyReport(report('w1', BUSY, { dpSize: 2, dpRank: 1 }), 0);
    expect(sut.model(M)?.allBusy).toBe(true);
    expect(observer.busyChanged).toHaveBeenCalledTimes(1);

    sut.applyReport(report('w1', FREE, { dpSize: 2, dpRank: 0 }), 0);
    expect(sut.model(M)?.allBusy).toBe(false);
    expect(freeIds(sut.model(M))).toEqual(['w1']);
  });

  it('reports the model all-busy only when every worker is busy', () => {
    sut.applyReport(report('w1', BUSY), 0);
    sut.applyReport(report('w2', FREE), 0);
    expect(sut.model(M)?.allBusy).toBe(false);
    sut.applyReport(report('w2', BUSY), 0);
    expect(sut.model(M)?.allBusy).toBe(true);
  });

  it('keeps the free list equal to the non-busy workers through many transitions', () => {
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const busy = new Set<string>();
    const steps = ['a', 'c', 'e', 'c', 'b', 'a', 'd', 'e', 'c', 'b', 'd', 'a', 'e'];
    for (const id of ids) sut.applyReport(report(id, FREE), 0);
    for (const id of steps) {
      if (busy.has(id)) busy.delete(id);
      else busy.add(id);
      sut.applyReport(report(id, busy.has(id) ? BUSY : FREE), 0);
      const model = sut.model(M) as ModelEntry;
      expect(freeIds(model)).toEqual(ids.filter((i) => !busy.has(i)));
      model.free.forEach((w, i) => expect(w.freeIndex).toBe(i));
    }
  });

  it('re-evaluates busy state as soon as a threshold changes, without a new report', () => {
    sut.applyReport(report('w1', 50), 0);
    thresholds.setOverride(M, { activeDecodeBlocks: 0.4 });
    expect(sut.model(M)?.allBusy).toBe(true);
    expect(observer.busyChanged).toHaveBeenCalledWith(expect.objectContaining({ busy: true }));
    thresholds.setOverride(M, undefined);
    expect(sut.model(M)?.allBusy).toBe(false);
  });

  it('leaves other models alone when one model threshold changes', () => {
    sut.applyReport(report('w1', 50), 0);
    sut.applyReport(report('w2', 50, { model: 'other' }), 0);
    thresholds.setOverride(M, { activeDecodeBlocks: 0.4 });
    expect(sut.model('other')?.allBusy).toBe(false);
  });

  it('removeWorker forgets the worker and tells observers why', () => {
    sut.applyReport(report('w1', FREE), 0);
    sut.removeWorker('w1', 'worker_down');
    expect(sut.workerCount()).toBe(0);
    expect(sut.model(M)?.workers.size).toBe(0);
    expect(sut.model(M)?.free).toEqual([]);
    expect(sut.model(M)?.allBusy).toBe(false);
    expect(sut.modelNames()).toEqual([M]);
    expect(observer.workerRemoved).toHaveBeenCalledWith(
      expect.objectContaining({ id: 'w1' }),
      'worker_down',
    );
  });

  it('ignores removeWorker for an unknown worker', () => {
    sut.removeWorker('ghost', 'worker_down');
    expect(observer.workerRemoved).not.toHaveBeenCalled();
  });

  it('expires only workers silent for longer than the TTL', () => {
    sut.applyReport(report('old', FREE), 0);
    sut.applyReport(report('busy-old', BUSY), 0);
    sut.applyReport(report('new', FREE), 500);
    sut.expire(1001);
    expect(freeIds(sut.model(M))).toEqual(['new']);
    expect(sut.workerCount()).toBe(1);
    expect(observer.workerRemoved.mock.calls.map(([w, why]) => [w.id, why]).sort()).toEqual([
      ['busy-old', 'expired'],
      ['old', 'expired'],
    ]);
  });

  it('does not expire anyone while expiry is paused, and gives a fresh TTL on resume', () => {
    sut.applyReport(report('w1', FREE), 0);
    sut.setExpiryPaused(true, 100);
    sut.expire(60_000);
    expect(sut.workerCount()).toBe(1);
    sut.setExpiryPaused(false, 60_000);
    sut.expire(60_900);
    expect(sut.workerCount()).toBe(1);
    sut.expire(61_001);
    expect(sut.workerCount()).toBe(0);
  });

  it('refuses new workers beyond maxWorkers but keeps updating known ones', () => {
    sut = build({ maxWorkers: 2 });
    sut.applyReport(report('w1', FREE), 0);
    sut.applyReport(report('w2', FREE), 0);
    expect(sut.applyReport(report('w3', FREE), 0)).toBe(false);
    expect(sut.workerCount()).toBe(2);
    expect(sut.applyReport(report('w1', BUSY), 0)).toBe(true);
    expect(freeIds(sut.model(M))).toEqual(['w2']);
  });

  it.each<[string, Partial<KvMetricsReport>]>([
    ['model', { model: 'other' }],
    ['endpoint', { endpoint: 'http://moved:9001' }],
    ['dp_size', { dpSize: 2 }],
  ])('replaces a worker that re-reports with a different %s', (_what, change) => {
    sut.applyReport(report('w1', BUSY), 0);
    sut.applyReport(report('w1', FREE, change), 10);
    expect(observer.workerRemoved).toHaveBeenCalledWith(expect.anything(), 'replaced');
    expect(sut.workerCount()).toBe(1);
    const fresh = sut.model(change.model ?? M)?.workers.get('w1');
    expect(fresh).toMatchObject({ ...change, busy: false });
    if (change.model) expect(sut.model(M)?.workers.size).toBe(0);
  });
});
