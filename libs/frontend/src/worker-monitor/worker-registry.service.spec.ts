import { SinceReport } from './since-report';
import { Logger } from '@nestjs/common';
import { KvMetricsReport } from '@sluice/contracts';
import { parsedReport } from '@sluice/testkit';
import { FrontendConfig, FrontendConfigValues } from '../config/frontend-config';
import { PRIORITY_CLASSES, PriorityClass } from '../config/priority';
import { NO_THRESHOLDS } from '../thresholds/busy-thresholds';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { ModelEntry, WorkerEntry } from './worker-entry';
import { MAX_EMPTY_MODELS, RegistryObserver, WorkerRegistry } from './worker-registry.service';

const M = 'Qwen/Qwen3-0.6B';
const BUSY = 95;
const FREE = 10;

/** A report whose decode usage is `used` of 100 blocks (the threshold below is 0.9). */
const report = (workerId: string, used: number, over: Partial<KvMetricsReport> = {}) =>
  parsedReport(workerId, { model: M, activeDecodeBlocks: used, ...over });

const freeIds = (m: ModelEntry | undefined): string[] => (m?.free ?? []).map((w) => w.id).sort();

describe('WorkerRegistry', () => {
  let thresholds: ThresholdsService;
  let observer: jest.Mocked<Required<RegistryObserver>>;
  let sut: WorkerRegistry;

  const build = (over: FrontendConfigValues = {}): WorkerRegistry => {
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
    observer = {
      rankUpdated: jest.fn(),
      busyChanged: jest.fn(),
      workerRemoved: jest.fn(),
      reservationsChanged: jest.fn(),
      modelForgotten: jest.fn(),
      routingChanged: jest.fn(),
    };
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
    expect(sut.applyReport(report('w1', FREE), 0)).toBe('applied');
    expect(sut.modelNames()).toEqual([M]);
    expect(freeIds(sut.model(M))).toEqual(['w1']);
    expect(sut.model(M)?.allBusy).toBe(false);
    expect(observer.rankUpdated).toHaveBeenCalledWith(expect.objectContaining({ id: 'w1' }), 0, {
      activeDecodeBlocks: FREE,
      kvTotalBlocks: 100,
      activePrefillTokens: 0,
      prefillReported: true,
      maxNumBatchedTokens: undefined,
      numRequestsWaiting: undefined,
      seq: undefined,
      publisher: '',
      receivedMs: 0,
      rivals: undefined,
      busyFor: { critical: false, standard: false, sheddable: false },
      heldUntil: { critical: 0, standard: 0, sheddable: 0 },
      reserved: {
        prefillTokens: 0,
        decodeBlocks: 0,
        waiting: 0,
        next: 0,
        since: new SinceReport(),
      },
      peers: { decodeBlocks: 0, prefillTokens: 0, waiting: 0 },
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
    // 95 % is over 0.9 (standard) and 0.72 (sheddable), not over 1 (critical: 1.08 capped at 1).
    expect(observer.busyChanged.mock.calls.map(([, c]) => c)).toEqual(['standard', 'sheddable']);

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
      model.free.forEach((w, i) => expect(w.classes.standard.freeIndex).toBe(i));
    }
  });

  it('re-evaluates busy state as soon as a threshold changes, without a new report', () => {
    sut.applyReport(report('w1', 50), 0);
    thresholds.setOverride(M, { activeDecodeBlocks: 0.4 });
    expect(sut.model(M)?.allBusy).toBe(true);
    expect(observer.busyChanged).toHaveBeenCalledWith(
      expect.objectContaining({ busy: true }),
      'standard',
    );
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
    expect(sut.applyReport(report('w3', FREE), 0)).toBe('refused');
    expect(sut.workerCount()).toBe(2);
    expect(sut.applyReport(report('w1', BUSY), 0)).toBe('applied');
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

  describe('two publishers for one worker', () => {
    const bridge = { source: 'bridge vllm h:1' };

    it('judges a rank by the higher load while two publishers report it within the TTL', () => {
      sut.applyReport(report('w1', FREE), 0);
      sut.applyReport(report('w1', BUSY, bridge), 100);
      expect(sut.model(M)?.allBusy).toBe(true);
      // The worker's own idle report no longer makes it free: the bridge's busy one stands.
      sut.applyReport(report('w1', FREE), 200);
      expect(sut.model(M)?.allBusy).toBe(true);
      expect(sut.conflicts).toBe(2);
      // The bridge sees it free too: free.
      sut.applyReport(report('w1', FREE, bridge), 300);
      expect(sut.model(M)?.allBusy).toBe(false);
      expect(sut.conflicts).toBe(3);
    });

    it('stops judging between publishers once the other one is silent for the TTL', () => {
      sut.applyReport(report('w1', BUSY, bridge), 0);
      sut.applyReport(report('w1', FREE), 500);
      expect(sut.model(M)?.allBusy).toBe(true);
      sut.applyReport(report('w1', FREE), 1501);
      expect(sut.model(M)?.allBusy).toBe(false);
      expect(sut.conflicts).toBe(1);
      expect(sut.model(M)?.workers.get('w1')?.ranks.get(0)?.rivals).toBeUndefined();
    });

    it('does not count one publisher, nor one that took over after the other went silent', () => {
      sut.applyReport(report('w1', BUSY), 0);
      sut.applyReport(report('w1', FREE), 100);
      sut.applyReport(report('w1', FREE, bridge), 1200);
      expect(sut.conflicts).toBe(0);
      expect(sut.model(M)?.allBusy).toBe(false);
    });

    it("keeps each publisher's seq on its own while both report", () => {
      sut.applyReport(report('w1', FREE, { seq: 9 }), 0);
      sut.applyReport(report('w1', FREE, { ...bridge, seq: 3 }), 10);
      expect(sut.applyReport(report('w1', BUSY, { ...bridge, seq: 2 }), 20)).toBe('stale');
      expect(sut.applyReport(report('w1', BUSY, { seq: 8 }), 30)).toBe('stale');
      expect(sut.model(M)?.allBusy).toBe(false);
    });

    it('remembers at most a few publishers per rank', () => {
      for (let i = 0; i < 50; i++) sut.applyReport(report('w1', FREE, { source: `p${i}` }), i);
      expect(sut.model(M)?.workers.get('w1')?.ranks.get(0)?.rivals?.size).toBe(4);
    });
  });

  describe('seq (docs/api.md#nats-subjects)', () => {
    it('ignores a report older than the last seen for the rank, and applies newer ones', () => {
      expect(sut.applyReport(report('w1', BUSY, { seq: 5 }), 0)).toBe('applied');
      expect(sut.applyReport(report('w1', FREE, { seq: 4 }), 1)).toBe('stale');
      expect(sut.model(M)?.allBusy).toBe(true); // the stale "free" changed nothing
      expect(sut.applyReport(report('w1', FREE, { seq: 6 }), 2)).toBe('applied');
      expect(sut.model(M)?.allBusy).toBe(false);
    });

    it('keeps a sequence per rank', () => {
      sut.applyReport(report('w1', BUSY, { dpSize: 2, dpRank: 0, seq: 9 }), 0);
      expect(sut.applyReport(report('w1', BUSY, { dpSize: 2, dpRank: 1, seq: 3 }), 0)).toBe(
        'applied',
      );
    });

    it('takes seq 0 as a restarted publisher, and another source as a sequence of its own', () => {
      sut.applyReport(report('w1', BUSY, { seq: 7, source: 'bridge a' }), 0);
      expect(sut.applyReport(report('w1', BUSY, { seq: 0, source: 'bridge a' }), 1)).toBe(
        'applied',
      );
      sut.applyReport(report('w1', BUSY, { seq: 7, source: 'bridge a' }), 2);
      expect(sut.applyReport(report('w1', FREE, { seq: 2, source: 'bridge b' }), 3)).toBe(
        'applied',
      );
    });

    it('does not refuse a report without seq', () => {
      sut.applyReport(report('w1', BUSY, { seq: 7 }), 0);
      expect(sut.applyReport(report('w1', FREE), 1)).toBe('applied');
    });
  });

  describe("prefill bookkeeping for ranks that don't report it (docs/api.md#nats-subjects)", () => {
    beforeEach(() => {
      sut = build({
        thresholds: {
          activeDecodeBlocks: null,
          activePrefillTokens: 100,
          activePrefillTokensFrac: null,
          waitingRequests: null,
        },
      });
    });
    const noPrefill = (id: string, over: Partial<KvMetricsReport> = {}) =>
      report(id, FREE, { activePrefillTokens: undefined, ...over });

    it('judges the rank on prompt tokens sent and not yet answered, split over its ranks', () => {
      sut.applyReport(noPrefill('w1', { dpSize: 2, dpRank: 0 }), 0);
      sut.applyReport(noPrefill('w1', { dpSize: 2, dpRank: 1 }), 0);
      const w = sut.model(M)?.workers.get('w1');
      if (!w) throw new Error('w1 missing');
      sut.addPendingPrefill(w, 200); // 100 per rank: not over 100
      expect(w.busy).toBe(false);
      sut.addPendingPrefill(w, 2); // 101 per rank
      expect(w.busy).toBe(true);
      expect(sut.model(M)?.allBusy).toBe(true);
      sut.addPendingPrefill(w, -150); // first tokens came back
      expect(w.busy).toBe(false);
      expect(w.ranks.get(0)?.activePrefillTokens).toBe(26);
    });

    it('keeps the count across reports and uses a reported value where there is one', () => {
      sut.applyReport(noPrefill('w1'), 0);
      const w = sut.model(M)?.workers.get('w1');
      if (!w) throw new Error('w1 missing');
      sut.addPendingPrefill(w, 150);
      expect(w.busy).toBe(true);
      sut.applyReport(noPrefill('w1'), 1); // a new report without prefill: still judged on 150
      expect(w.busy).toBe(true);
      sut.applyReport(report('w1', FREE, { activePrefillTokens: 10 }), 2); // reported: wins
      expect(w.busy).toBe(false);
      sut.addPendingPrefill(w, 500); // ignored while the rank reports its own
      expect(w.busy).toBe(false);
    });

    it('leaves a worker that expired meanwhile out of the free list', () => {
      sut.applyReport(noPrefill('w1'), 0);
      const w = sut.model(M)?.workers.get('w1');
      if (!w) throw new Error('w1 missing');
      sut.addPendingPrefill(w, 150);
      sut.expire(10_000);
      sut.addPendingPrefill(w, -150);
      expect(sut.model(M)?.free).toEqual([]);
    });
  });

  describe('reservations between reports (issue 14)', () => {
    /** 7 prompt tokens + 153 output tokens: 10 KV blocks of 16 tokens each. */
    const BLOCKS_10 = [7, 153] as const;
    const w1 = (): WorkerEntry => {
      const w = sut.model(M)?.workers.get('w1');
      if (!w) throw new Error('w1 missing');
      return w;
    };
    const burst = (n: number, atMs: number) =>
      Array.from({ length: n }, () => sut.reserve(w1(), ...BLOCKS_10, atMs));

    it('judges a burst sent after the newest report on the report plus the burst', () => {
      sut.applyReport(report('w1', FREE, { timestampMs: 1000 }), 1000);
      burst(8, 1001); // 10 + 80 of 100 blocks: not over 0.9
      expect(w1().busy).toBe(false);
      burst(1, 1002); // 100 of 100
      expect(w1().busy).toBe(true);
      expect(sut.model(M)?.allBusy).toBe(true);
      // Each found room for its blocks when it was sent: none waits in the engine's queue.
      expect(w1().ranks.get(0)?.reserved).toMatchObject({ decodeBlocks: 90, waiting: 0 });
    });

    it("judges a worker on the other replicas' shared reservations too, until they withdraw them (issue 42)", () => {
      sut.applyReport(report('w1', FREE, { timestampMs: 1000 }), 1000);
      const peer = (decodeBlocks: number) =>
        new Map([[0, { decodeBlocks, prefillTokens: 0, waiting: 0 }]]);
      expect(sut.sharePeerReservations('w1', 'a', peer(40))).toBe(true);
      expect(sut.sharePeerReservations('w1', 'b', peer(30))).toBe(true);
      burst(1, 1001); // 10 reported + 70 shared + 10 own: not over 0.9
      expect(w1().busy).toBe(false);
      expect(sut.sharePeerReservations('w1', 'b', peer(40))).toBe(true); // 100 of 100
      expect(w1().busy).toBe(true);
      expect(observer.reservationsChanged).toHaveBeenCalledWith(w1());
      sut.sharePeerReservations('w1', 'a', undefined);
      expect(w1().busy).toBe(false);
      expect(w1().ranks.get(0)?.peers).toEqual({ decodeBlocks: 40, prefillTokens: 0, waiting: 0 });
      expect(sut.sharePeerReservations('unknown', 'a', peer(40))).toBe(false);
    });

    it('gives a rank that reports after a replica shared its reservations those reservations', () => {
      sut.applyReport(report('w2', FREE, { dpSize: 2, dpRank: 0 }), 1000);
      const ranks = new Map([
        [0, { decodeBlocks: 10, prefillTokens: 5, waiting: 1 }],
        [1, { decodeBlocks: 20, prefillTokens: 0, waiting: 0 }],
      ]);
      sut.sharePeerReservations('w2', 'a', ranks);
      sut.applyReport(report('w2', FREE, { dpSize: 2, dpRank: 1 }), 1001);
      const w2 = sut.worker('w2');
      expect(w2?.ranks.get(0)?.peers).toEqual({ decodeBlocks: 10, prefillTokens: 5, waiting: 1 });
      expect(w2?.ranks.get(1)?.peers).toEqual({ decodeBlocks: 20, prefillTokens: 0, waiting: 0 });
    });

    it("reserves in the worker's own block size: one llama.cpp slot per request", () => {
      // 4 slots of a 2048-token window, 2 processing: free (0.5 is not over 0.9).
      const slots = { kvTotalBlocks: 4, kvBlockSize: 2048, timestampMs: 1000 };
      sut.applyReport(report('w1', 2, slots), 1000);
      burst(1, 1001); // 3 of 4 slots
      expect(w1().busy).toBe(false);
      expect(w1().ranks.get(0)?.reserved.decodeBlocks).toBe(1);
      burst(1, 1002); // 4 of 4
      expect(w1().busy).toBe(true);
    });

    it('frees a slot the moment a request its report holds ends, before the next report', () => {
      const slots = { kvTotalBlocks: 4, kvBlockSize: 2048, timestampMs: 1000 };
      sut.applyReport(report('w1', 3, slots), 1000);
      const [mine] = burst(1, 1001);
      sut.applyReport(report('w1', 4, { ...slots, timestampMs: 1100 }), 1100); // holds it
      expect(w1().busy).toBe(true);
      mine.release();
      expect(w1().busy).toBe(false);
      // A report measured before it ended still holds it: still taken off.
      sut.applyReport(report('w1', 4, { ...slots, timestampMs: 1150 }), 1150);
      expect(w1().busy).toBe(false);
    });

    it('counts a request as waiting in the engine only when it found no room there', () => {
      const slots = {
        kvTotalBlocks: 4,
        kvBlockSize: 2048,
        numRequestsWaiting: 0,
        timestampMs: 1000,
      };
      sut.applyReport(report('w1', 3, slots), 1000);
      burst(1, 1001); // the last free slot: it starts at once
      expect(w1().ranks.get(0)?.reserved.waiting).toBe(0);
      burst(1, 1002); // no slot left: it waits for one
      expect(w1().ranks.get(0)?.reserved.waiting).toBe(1);
    });

    it('drops the reservations a newer report covers, and keeps those it cannot show', () => {
      sut.applyReport(report('w1', FREE, { timestampMs: 1000 }), 1000);
      burst(5, 1100);
      burst(5, 1300);
      expect(w1().busy).toBe(true);
      // Measured before the burst, arriving after it: it shows none of it.
      sut.applyReport(report('w1', FREE, { timestampMs: 1050 }), 1400);
      expect(w1().busy).toBe(true);
      // Measured between the two halves: the first half is in its 60 blocks.
      sut.applyReport(report('w1', 60, { timestampMs: 1200 }), 1400);
      expect(w1().ranks.get(0)?.reserved.decodeBlocks).toBe(50);
      expect(w1().busy).toBe(true); // 60 + 50
      sut.applyReport(report('w1', 80, { timestampMs: 1300 }), 1400);
      expect(w1().ranks.get(0)?.reserved.decodeBlocks).toBe(0);
      expect(w1().busy).toBe(false);
      expect(w1().reservations.size).toBe(0);
    });

    it('takes a report without a sane timestamp as measured when it arrived', () => {
      sut.applyReport(report('w1', FREE), 1000);
      burst(9, 1000);
      expect(w1().busy).toBe(true);
      // From the future (a clock ahead of ours): covers what was sent up to its arrival only.
      sut.applyReport(report('w1', FREE, { timestampMs: 99_999 }), 1000);
      expect(w1().busy).toBe(false);
      burst(9, 1500);
      // Older than the TTL (1 s here; a clock far behind): as if stamped on arrival.
      sut.applyReport(report('w1', FREE, { timestampMs: 100 }), 1600);
      expect(w1().busy).toBe(false);
      burst(9, 1700);
      sut.applyReport(report('w1', FREE), 1800); // no timestamp
      expect(w1().busy).toBe(false);
    });

    it('frees the blocks of a request that ends before any report covers it', () => {
      sut.applyReport(report('w1', FREE, { timestampMs: 1000 }), 1000);
      const held = burst(9, 1001);
      expect(w1().busy).toBe(true);
      held[0].firstToken();
      expect(w1().busy).toBe(true); // its blocks are still held
      held[0].release();
      held[0].release();
      expect(w1().busy).toBe(false);
      expect(w1().ranks.get(0)?.reserved.decodeBlocks).toBe(80);
    });

    it("splits the reservations over a worker's ranks, each covered by its own reports", () => {
      sut.applyReport(report('w1', FREE, { dpSize: 2, dpRank: 0, timestampMs: 1000 }), 1000);
      sut.applyReport(report('w1', FREE, { dpSize: 2, dpRank: 1, timestampMs: 1000 }), 1000);
      burst(17, 1001); // 85 blocks per rank: 95 of 100
      expect(w1().busy).toBe(true);
      sut.applyReport(report('w1', 55, { dpSize: 2, dpRank: 0, timestampMs: 1001 }), 1002);
      expect(w1().busy).toBe(false); // rank 0 shows 55 and nothing more; rank 1 is still at 95
      expect(w1().ranks.get(1)?.busyFor.standard).toBe(true);
    });

    it('adds reserved prompt tokens to a reported prefill load', () => {
      sut = build({
        thresholds: {
          activeDecodeBlocks: null,
          activePrefillTokens: 100,
          activePrefillTokensFrac: null,
          waitingRequests: null,
        },
      });
      sut.applyReport(report('w1', FREE, { activePrefillTokens: 60, timestampMs: 1000 }), 1000);
      const r = sut.reserve(w1(), 41, 0, 1001);
      expect(w1().busy).toBe(true); // 60 reported + 41 sent since
      r.firstToken();
      expect(w1().busy).toBe(false);
      // Its blocks stay reserved (a decode threshold would still see them), its prompt does not.
      expect(w1().ranks.get(0)?.reserved).toMatchObject({ prefillTokens: 0, decodeBlocks: 3 });
    });
  });

  describe('memory: tracked ranks (issue 11 item 3)', () => {
    const rank = (id: string, dpRank: number, used = FREE, dpSize = 1024) =>
      report(id, used, { dpSize, dpRank });

    it('stores only the ranks reported, whatever dp_size says', () => {
      sut.applyReport(rank('w1', 0), 0);
      sut.applyReport(rank('w1', 1000), 0);
      const w = sut.model(M)?.workers.get('w1');
      expect(w?.dpSize).toBe(1024);
      expect([...(w?.ranks.keys() ?? [])]).toEqual([0, 1000]);
      expect(sut.trackedRanks()).toBe(2);
    });

    it('refuses a report that would take the tracked ranks past --max-tracked-ranks', () => {
      sut = build({ maxTrackedRanks: 3 });
      expect(sut.applyReport(rank('w1', 0), 0)).toBe('applied');
      expect(sut.applyReport(rank('w1', 7), 0)).toBe('applied');
      expect(sut.applyReport(rank('w2', 0), 0)).toBe('applied');
      expect(sut.applyReport(rank('w2', 1), 0)).toBe('refused_ranks'); // a new rank: refused
      expect(sut.applyReport(rank('w3', 0), 0)).toBe('refused_ranks'); // a new worker: too
      expect(sut.model(M)?.workers.has('w3')).toBe(false);
      expect(sut.applyReport(rank('w1', 0, BUSY), 1)).toBe('applied'); // a known rank: applied
      expect(sut.model(M)?.workers.get('w1')?.ranks.get(0)?.activeDecodeBlocks).toBe(BUSY);
      sut.removeWorker('w1', 'worker_down'); // its two ranks are free again
      expect(sut.trackedRanks()).toBe(1);
      expect(sut.applyReport(rank('w3', 0), 2)).toBe('applied');
      expect(sut.applyReport(rank('w2', 1), 2)).toBe('applied');
      expect(sut.applyReport(rank('w4', 0), 2)).toBe('refused_ranks');
    });

    it('frees the ranks of a worker replaced under the same id', () => {
      sut = build({ maxTrackedRanks: 2 });
      sut.applyReport(rank('w1', 0), 0);
      sut.applyReport(rank('w1', 1), 0);
      // Same id, another dp_size: a new identity whose one rank fits once the old ones are gone.
      expect(sut.applyReport(rank('w1', 0, FREE, 4), 1)).toBe('applied');
      expect(sut.trackedRanks()).toBe(1);
    });

    it('keeps the busy rule exact: busy only when all dp_size ranks are busy', () => {
      sut.applyReport(rank('w1', 0, BUSY, 3), 0);
      sut.applyReport(rank('w1', 2, BUSY, 3), 0);
      expect(sut.model(M)?.workers.get('w1')?.busy).toBe(false); // rank 1 never reported
      expect(sut.model(M)?.allBusy).toBe(false);
      sut.applyReport(rank('w1', 1, BUSY, 3), 0);
      expect(sut.model(M)?.allBusy).toBe(true);
      sut.applyReport(rank('w1', 1, FREE, 3), 1);
      expect(sut.model(M)?.allBusy).toBe(false);
    });
  });

  describe('forgetting models (issue 11 item 9)', () => {
    it('tells observers when an empty model is forgotten', () => {
      const forgotten: string[] = [];
      sut.observe({ ...observer, modelForgotten: (name) => forgotten.push(name) });
      for (let i = 0; i <= MAX_EMPTY_MODELS; i++) {
        sut.applyReport(report(`w${i}`, FREE, { model: `m${i}` }), 0);
        sut.removeWorker(`w${i}`, 'worker_down');
      }
      expect(forgotten).toEqual(['m0']);
      expect(sut.model('m0')).toBeUndefined();
      expect(sut.model('m1')).toBeDefined();
    });
  });

  describe('priority classes (docs/security.md#priority-classes-who-may-set-x-sluice-priority)', () => {
    /** Prefill threshold 1000: sheddable 800, critical 1200 (factors 0.8 and 1.2). */
    const prefill = (id: string, tokens: number, over: Partial<KvMetricsReport> = {}) =>
      parsedReport(id, { model: M, activeDecodeBlocks: 0, activePrefillTokens: tokens, ...over });
    const freeFor = (c: PriorityClass): string[] =>
      (sut.model(M)?.freeFor[c] ?? []).map((w) => w.id).sort();
    const refused = (): PriorityClass[] =>
      PRIORITY_CLASSES.filter((c) => sut.model(M)?.allBusyFor(c));

    beforeEach(() => {
      sut = build({
        thresholds: { ...NO_THRESHOLDS, activeDecodeBlocks: 0.9, activePrefillTokens: 1000 },
      });
    });

    it('judges each class with its own thresholds: sheddable is refused first, critical last', () => {
      sut.applyReport(prefill('w1', 800), 0);
      expect(refused()).toEqual([]);
      sut.applyReport(prefill('w1', 801), 0);
      expect(refused()).toEqual(['sheddable']);
      sut.applyReport(prefill('w1', 1001), 0);
      expect(refused()).toEqual(['standard', 'sheddable']);
      sut.applyReport(prefill('w1', 1200), 0);
      expect(refused()).toEqual(['standard', 'sheddable']);
      sut.applyReport(prefill('w1', 1201), 0);
      expect(refused()).toEqual(PRIORITY_CLASSES);
      sut.applyReport(prefill('w1', 0), 0);
      expect(refused()).toEqual([]);
    });

    it('caps the decode ratio at 1 for critical: a full KV cache alone never refuses it', () => {
      sut.applyReport(report('w1', 100), 0);
      expect(refused()).toEqual(['standard', 'sheddable']);
      expect(sut.model(M)?.workers.get('w1')?.busyFor('critical')).toBe(false);
    });

    it('keeps a free list per class, and tells observers which class changed', () => {
      sut.applyReport(prefill('a', 900), 0); // busy for sheddable only
      sut.applyReport(prefill('b', 1100), 0); // busy for sheddable and standard
      sut.applyReport(prefill('c', 0), 0);
      expect(PRIORITY_CLASSES.map(freeFor)).toEqual([['a', 'b', 'c'], ['a', 'c'], ['c']]);
      expect(observer.busyChanged.mock.calls.map(([w, c]) => `${w.id}:${c}`)).toEqual([
        'a:sheddable',
        'b:standard',
        'b:sheddable',
      ]);
      sut.removeWorker('c', 'worker_down');
      expect(PRIORITY_CLASSES.map(freeFor)).toEqual([['a', 'b'], ['a'], []]);
      for (const c of PRIORITY_CLASSES) {
        sut.model(M)?.freeFor[c].forEach((w, i) => expect(w.classes[c].freeIndex).toBe(i));
      }
    });

    it('marks a data-parallel worker busy for a class only when every rank is', () => {
      sut.applyReport(prefill('dp', 1100, { dpSize: 2, dpRank: 0 }), 0);
      sut.applyReport(prefill('dp', 900, { dpSize: 2, dpRank: 1 }), 0);
      expect(refused()).toEqual(['sheddable']);
      sut.applyReport(prefill('dp', 1100, { dpSize: 2, dpRank: 1 }), 0);
      expect(refused()).toEqual(['standard', 'sheddable']);
    });

    it('re-judges every class at once when a threshold changes', () => {
      sut.applyReport(prefill('w1', 500), 0);
      thresholds.setOverride(M, { activePrefillTokens: 600 }); // sheddable 480, critical 720
      expect(refused()).toEqual(['sheddable']);
      thresholds.setOverride(M, { activePrefillTokens: 400 }); // critical 480
      expect(refused()).toEqual(PRIORITY_CLASSES);
      thresholds.setOverride(M, undefined);
      expect(refused()).toEqual([]);
    });

    it('re-judges every class as this frontend sends prompts to a worker that reports none', () => {
      sut.applyReport(report('w1', 0, { activePrefillTokens: undefined }), 0);
      const w1 = sut.model(M)?.workers.get('w1') as WorkerEntry;
      sut.addPendingPrefill(w1, 1100);
      expect(refused()).toEqual(['standard', 'sheddable']);
      sut.addPendingPrefill(w1, -1100);
      expect(refused()).toEqual([]);
    });
  });
});
