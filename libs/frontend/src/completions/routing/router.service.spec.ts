import { Logger } from '@nestjs/common';
import { OVERLOAD_MESSAGE } from '@sluice/contracts';
import { ServiceOverloadedError } from '../../admission/errors/service-overloaded.error';
import { ModelNotFoundError, NoWorkersAvailableError } from '../errors/model-unavailable.error';
import { FrontendConfig } from '../../config/frontend-config';
import { PriorityClass } from '../../config/priority';
import { RequestMetricsService } from '../../request-metrics/request-metrics.service';
import { WorkerRegistry } from '../../worker-monitor/worker-registry.service';
import { ThresholdsService } from '../../thresholds/thresholds.service';
import { Lease, RouterService } from './router.service';
import { WorkerTraffic } from './worker-traffic';

const M = 'm';

describe('RouterService', () => {
  let registry: WorkerRegistry;
  let queued: { inc: jest.Mock; dec: jest.Mock };
  let traffic: WorkerTraffic;
  let sut: RouterService;
  const signal = new AbortController();

  const build = (over: Partial<FrontendConfig> = {}): void => {
    const config = new FrontendConfig({
      admissionControl: 'token-capacity',
      thresholds: {
        activeDecodeBlocks: 0.9,
        activePrefillTokens: null,
        activePrefillTokensFrac: null,
      },
      routerQueueThreshold: 1,
      routerQueueMaxDepth: 2,
      routerQueueTimeoutMs: 5000,
      ...over,
    });
    registry = new WorkerRegistry(config, new ThresholdsService(config));
    queued = { inc: jest.fn(), dec: jest.fn() };
    traffic = new WorkerTraffic();
    sut = new RouterService(
      config,
      registry,
      { queued } as unknown as RequestMetricsService,
      traffic,
    );
    sut.onModuleInit();
  };

  /** A worker with max_num_batched_tokens 100; `used` of 100 KV blocks (busy above 90). */
  const report = (id: string, used = 0): void => {
    registry.applyReport(
      {
        workerId: id,
        model: M,
        endpoint: `http://${id}`,
        dpRank: 0,
        dpSize: 1,
        activeDecodeBlocks: used,
        kvTotalBlocks: 100,
        activePrefillTokens: 0,
        maxNumBatchedTokens: 100,
        timestampMs: undefined,
        numRequestsWaiting: undefined,
        seq: undefined,
      },
      Date.now(),
    );
  };

  const lease = (tokens: number, s = signal, c: PriorityClass = 'standard'): Lease => {
    const got = sut.acquire(M, tokens, s, c);
    if (got instanceof Promise) throw new Error('expected an immediate lease, got queued');
    return got;
  };

  const waitFor = (tokens: number, s = signal, c: PriorityClass = 'standard'): Promise<Lease> => {
    const got = sut.acquire(M, tokens, s, c);
    if (!(got instanceof Promise)) throw new Error(`expected queueing, got ${got.worker.id}`);
    return got;
  };

  const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    // Queued requests arm a timeout; fake timers keep them from outliving the test.
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    build();
  });
  afterEach(() => {
    jest.clearAllTimers();
    jest.useRealTimers();
  });

  it('answers 404 for a model no worker has reported', () => {
    expect(() => sut.acquire('nope', 1, signal)).toThrow(ModelNotFoundError);
    expect(() => sut.acquire('nope', 1, signal)).toThrow(expect.objectContaining({ status: 404 }));
  });

  it("answers 503 No workers available once the model's workers are gone", () => {
    report('w1');
    registry.removeWorker('w1', 'worker_down');
    expect(() => sut.acquire(M, 1, signal)).toThrow(NoWorkersAvailableError);
    expect(() => sut.acquire(M, 1, signal)).toThrow("No workers available for model 'm'");
  });

  it('leases a free worker and counts its prompt tokens until released once', () => {
    report('w1');
    const l = lease(40);
    expect(l.worker.id).toBe('w1');
    expect(traffic.peek(l.worker)).toEqual({ requests: 1, promptTokens: 40 });
    l.release();
    l.release();
    expect(traffic.peek(l.worker)).toEqual({ requests: 0, promptTokens: 0 });
  });

  it('counts prompt tokens as waiting for prefill until the first token, once', () => {
    report('w1');
    const a = lease(40);
    const b = lease(2);
    expect(a.worker.pendingPrefillTokens).toBe(42);
    a.firstToken();
    a.firstToken();
    expect(a.worker.pendingPrefillTokens).toBe(2);
    a.release();
    b.release(); // ended before its first token (e.g. cancelled): no longer waiting either
    expect(a.worker.pendingPrefillTokens).toBe(0);
    expect(traffic.peek(a.worker).promptTokens).toBe(0);
  });

  it('without a queue threshold rejects as overloaded when every worker is busy', () => {
    build({ routerQueueThreshold: null });
    report('w1', 95);
    expect(() => sut.acquire(M, 1, signal)).toThrow(OVERLOAD_MESSAGE);
  });

  it('with admission control off still routes to a busy worker', () => {
    build({ routerQueueThreshold: null, admissionControl: 'none' });
    report('w1', 95);
    expect(lease(1).worker.id).toBe('w1');
  });

  it('dispatches up to F × max_num_batched_tokens in flight, then queues', async () => {
    report('w1');
    lease(100);
    expect(lease(1).worker.id).toBe('w1'); // 100 in flight is not more than 1 × 100
    const pending = waitFor(1);
    expect(queued.inc).toHaveBeenCalledWith({ model: M });
    let settled = false;
    pending.then(
      () => (settled = true),
      () => (settled = true),
    );
    await flush();
    expect(settled).toBe(false);
  });

  it('routes to a worker still under the threshold before queueing', () => {
    report('w1');
    report('w2');
    const first = lease(150);
    expect(lease(150).worker).not.toBe(first.worker);
  });

  it('hands queued requests out in FIFO order as leases are released', async () => {
    report('w1');
    report('w2');
    const first = lease(150);
    const second = lease(150);
    const order: string[] = [];
    const a = waitFor(120).then((l) => order.push(`a@${l.worker.id}`));
    const b = waitFor(120).then((l) => order.push(`b@${l.worker.id}`));

    first.release();
    await flush();
    expect(order).toEqual([`a@${first.worker.id}`]);

    second.release();
    await Promise.all([a, b]);
    expect(order).toEqual([`a@${first.worker.id}`, `b@${second.worker.id}`]);
    expect(queued.dec).toHaveBeenCalledTimes(2);
  });

  it('hands a queued request to a worker that joins', async () => {
    report('w1');
    lease(150);
    const pending = waitFor(10);
    report('w2');
    await expect(pending).resolves.toMatchObject({ worker: { id: 'w2' } });
  });

  it('rejects as overloaded when the queue is full', () => {
    report('w1');
    lease(150);
    void waitFor(1);
    void waitFor(1);
    expect(() => sut.acquire(M, 1, signal)).toThrow(ServiceOverloadedError);
    expect(() => sut.acquire(M, 1, signal)).toThrow(/router queue is full/);
  });

  it('rejects a queued request as overloaded after the queue timeout', async () => {
    report('w1');
    const holder = lease(150);
    const pending = waitFor(1);
    const outcome = expect(pending).rejects.toThrow(/timed out waiting in the router queue/);

    jest.advanceTimersByTime(4999);
    expect(queued.dec).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    await outcome;
    await expect(pending).rejects.toBeInstanceOf(ServiceOverloadedError);
    expect(queued.dec).toHaveBeenCalledWith({ model: M });

    holder.release();
    expect(traffic.peek(holder.worker).promptTokens).toBe(0); // nothing was handed to the timed-out one
  });

  it('removes a queued request whose client went away', async () => {
    report('w1');
    const holder = lease(150);
    const controller = new AbortController();
    const gone = waitFor(7, controller);
    const stays = waitFor(9);

    controller.abort();
    await expect(gone).rejects.toThrow();
    expect(queued.dec).toHaveBeenCalledTimes(1);
    const third = waitFor(1); // the aborted request's slot is free again (max depth 2)

    holder.release();
    await Promise.all([stays, third]);
    expect(traffic.peek(holder.worker).promptTokens).toBe(9 + 1); // the aborted 7 never got a lease
  });

  describe('priority classes (contract §8)', () => {
    // Decode threshold 0.9: sheddable 0.72, critical 1 (1.08 capped).
    it("routes a class's request only to workers free for that class", () => {
      build({ routerQueueThreshold: null });
      report('critical-only', 95);
      report('not-sheddable', 80);
      const ids = (c: PriorityClass, n: number): string[] =>
        Array.from({ length: n }, () => lease(1, signal, c).worker.id).sort();
      expect(new Set(ids('critical', 4))).toEqual(new Set(['critical-only', 'not-sheddable']));
      expect(new Set(ids('standard', 4))).toEqual(new Set(['not-sheddable']));
      expect(() => sut.acquire(M, 1, signal, 'sheddable')).toThrow(OVERLOAD_MESSAGE);
    });

    it('retries a failed worker only on another worker free for the class', () => {
      build({ routerQueueThreshold: null });
      report('a', 95);
      report('b', 95);
      report('c', 10);
      const first = registry.model(M)?.workers.get('a');
      if (!first) throw new Error('no worker a');
      expect(sut.acquireOther(first, 1, 'standard')?.worker.id).toBe('c');
      const ids = new Set(
        Array.from({ length: 6 }, () => sut.acquireOther(first, 1, 'critical')?.worker.id),
      );
      expect(ids).toEqual(new Set(['b', 'c']));
    });

    it('serves the queue critical first, then standard, then sheddable, FIFO within a class', async () => {
      build({ routerQueueMaxDepth: 10 });
      report('w1');
      const order: string[] = [];
      const leases = new Map<string, Lease>();
      const queue = (name: string, c: PriorityClass): Promise<void> =>
        waitFor(120, signal, c).then((l) => {
          order.push(name);
          leases.set(name, l);
        });
      let holder = lease(150);
      void queue('shed-1', 'sheddable');
      void queue('std-1', 'standard');
      void queue('crit-1', 'critical');
      void queue('shed-2', 'sheddable');
      void queue('crit-2', 'critical');
      void queue('std-2', 'standard');
      // Each lease fills the worker (120 > 1 x 100): one waiter goes per release.
      for (let i = 0; i < 6; i++) {
        holder.release();
        await flush();
        expect(order).toHaveLength(i + 1);
        holder = leases.get(order[i]) as Lease;
      }
      expect(order).toEqual(['crit-1', 'crit-2', 'std-1', 'std-2', 'shed-1', 'shed-2']);
    });

    it('lets a request overtake queued waiters of lower classes, never its own or higher', async () => {
      report('w1', 95); // free for critical only
      const standard = waitFor(1);
      expect(lease(1, signal, 'critical').worker.id).toBe('w1');
      // The worker frees up for standard: the queued request goes first.
      report('w1', 10);
      await expect(standard).resolves.toMatchObject({ worker: { id: 'w1' } });
    });

    it('makes room in a full queue by refusing the newest waiter of the lowest class', async () => {
      report('w1');
      lease(150);
      const oldShed = waitFor(1, signal, 'sheddable');
      const newShed = waitFor(1, signal, 'sheddable');
      const crit = waitFor(1, signal, 'critical'); // full (depth 2): the newest sheddable goes
      await expect(newShed).rejects.toThrow(/router queue is full/);
      const std = waitFor(1, signal, 'standard'); // the other sheddable goes
      await expect(oldShed).rejects.toThrow(/router queue is full/);
      expect(() => sut.acquire(M, 1, signal, 'sheddable')).toThrow(/router queue is full/);
      expect(() => sut.acquire(M, 1, signal, 'standard')).toThrow(/router queue is full/);
      expect(queued.dec).toHaveBeenCalledTimes(2);
      void crit.catch(() => undefined);
      void std.catch(() => undefined);
    });
  });
});
