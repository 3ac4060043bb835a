import { Logger } from '@nestjs/common';
import { OVERLOAD_MESSAGE } from '@sluice/contracts';
import { AdmissionDecision } from '../../admission/admission-decision.service';
import { CriticalWait } from '../../admission/critical-wait';
import { LifecycleService } from '../../admission/lifecycle.service';
import { TenantShares } from '../../admission/tenant-shares';
import { TenantDirectory } from '../../tenants/tenant-directory.service';
import { TenantIdentity } from '../../tenants/tenant-identity';
import { RequestTenant } from '../../tenants/request-tenant';
import { ServiceOverloadedError } from '../../admission/errors/service-overloaded.error';
import { OBJECTIVE_MISSED } from '../../admission/refusal';
import { ModelNotFoundError, NoWorkersAvailableError } from '../errors/model-unavailable.error';
import { FrontendConfigValues } from '../../config/frontend-config';
import { PriorityClass } from '../../config/priority';
import { RequestMetricsService } from '../../request-metrics/request-metrics.service';
import { WorkerRegistry } from '../../worker-monitor/worker-registry.service';
import { ThresholdsService } from '../../thresholds/thresholds.service';
import { Lease, RouterService } from './router.service';
import { TtftPredictor } from '../../ttft-prediction/ttft-predictor.service';
import { ObjectiveGate } from './objective-gate';
import { WorkerChoice } from './worker-choice';
import { WorkerTraffic } from './worker-traffic';
import { M, routingFixture, RoutingFixture } from './routing.fixture';

/** Decode threshold 0.5 (sheddable 0.4, critical 0.6), no router queue threshold. */
const HALF_WITHOUT_QUEUE_THRESHOLD: FrontendConfigValues = {
  routerQueueThreshold: null,
  routerQueueMaxDepth: 10,
  thresholds: { activeDecodeBlocks: 0.5, activePrefillTokens: null, activePrefillTokensFrac: null },
};

describe('RouterService', () => {
  let registry: WorkerRegistry;
  let queued: { inc: jest.Mock; dec: jest.Mock };
  const wouldReject = jest.fn();
  const explored = jest.fn();
  let traffic: WorkerTraffic;
  let thresholds: ThresholdsService;
  let sut: RouterService;
  let predictor: TtftPredictor;
  const signal = new AbortController();

  let report: RoutingFixture['report'];

  /** The router over the shared fixture (routing.fixture.ts): real registry, thresholds, traffic. */
  const build = (over: FrontendConfigValues = {}): void => {
    const fx = routingFixture(over);
    ({ thresholds, registry, traffic, predictor, report } = fx);
    queued = { inc: jest.fn(), dec: jest.fn() };
    const criticalWait = new CriticalWait();
    const shares = new TenantShares();
    const metrics = { queued, wouldReject, explored } as unknown as RequestMetricsService;
    const choice = new WorkerChoice(fx.config, traffic, thresholds, predictor);
    sut = new RouterService(
      fx.config,
      registry,
      metrics,
      traffic,
      choice,
      new ObjectiveGate(fx.config, thresholds, metrics, choice),
      criticalWait,
      new AdmissionDecision(
        registry,
        thresholds,
        new LifecycleService(),
        criticalWait,
        shares,
        new TenantIdentity(fx.config, new TenantDirectory()),
      ),
      shares,
      fx.ejection,
    );
    sut.onModuleInit();
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
    expect(traffic.peek(l.worker)).toEqual({ requests: 1, prefilling: 1, promptTokens: 40 });
    l.release();
    l.release();
    expect(traffic.peek(l.worker)).toEqual({ requests: 0, prefilling: 0, promptTokens: 0 });
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

  it('routes to a busy worker of a model in shadow mode, globally or of its own', () => {
    build({ routerQueueThreshold: null, admissionControl: 'shadow' });
    report('w1', 95);
    expect(lease(1).worker.id).toBe('w1');
    build({ routerQueueThreshold: null });
    report('w1', 95);
    thresholds.setOverride(M, { admissionControl: 'shadow' });
    expect(lease(1).worker.id).toBe('w1');
    thresholds.setOverride(M, { admissionControl: null });
    expect(() => sut.acquire(M, 1, signal)).toThrow(OVERLOAD_MESSAGE);
  });

  it('rejects as overloaded for a model enforcing on its own under a global none', () => {
    build({ routerQueueThreshold: null, admissionControl: 'none' });
    report('w1', 95);
    thresholds.setOverride(M, { admissionControl: 'token-capacity' });
    expect(() => sut.acquire(M, 1, signal)).toThrow(OVERLOAD_MESSAGE);
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

  describe('priority classes (docs/security.md#priority-classes-who-may-set-x-sluice-priority)', () => {
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
      expect(sut.acquireOther(new Set([first]), 1, 'standard')?.worker.id).toBe('c');
      const ids = new Set(
        Array.from(
          { length: 6 },
          () => sut.acquireOther(new Set([first]), 1, 'critical')?.worker.id,
        ),
      );
      expect(ids).toEqual(new Set(['b', 'c']));
      const second = registry.model(M)?.workers.get('c');
      if (!second) throw new Error('no worker c');
      // A request that failed on a and c too: b is what is left for critical, none for standard.
      expect(sut.acquireOther(new Set([first, second]), 1, 'critical')?.worker.id).toBe('b');
      expect(sut.acquireOther(new Set([first, second]), 1, 'standard')).toBeUndefined();
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

    describe('without a queue threshold, a critical request every worker is busy for', () => {
      // Decode threshold 0.5: sheddable 0.4, critical 0.6. Each 1-token lease reserves 1 block.
      beforeEach(() => {
        build(HALF_WITHOUT_QUEUE_THRESHOLD);
        report('w1');
      });

      it('waits ahead of lower classes while they hold more requests than critical ones wait', async () => {
        lease(1, signal, 'standard');
        lease(1, signal, 'sheddable');
        report('w1', 70); // busy for every class
        const served: string[] = [];
        const first = waitFor(1, signal, 'critical').then((l) => served.push(`c1@${l.worker.id}`));
        const second = waitFor(1, signal, 'critical').then((l) => served.push(`c2@${l.worker.id}`));
        // Two lower-class requests in flight, two critical ones waiting: the next is refused.
        expect(() => sut.acquire(M, 1, signal, 'critical')).toThrow(OVERLOAD_MESSAGE);
        report('w1', 55); // + 2 reserved: free for critical only
        await Promise.all([first, second]);
        expect(served).toEqual(['c1@w1', 'c2@w1']);
        // Lower classes are refused while the worker is busy for them.
        expect(() => sut.acquire(M, 1, signal, 'standard')).toThrow(OVERLOAD_MESSAGE);
        report('w1', 70);
        // Nothing waits now: two lower-class requests in flight make room for two more.
        void waitFor(1, signal, 'critical').catch(() => undefined);
      });

      it('is refused once no lower-class request is in flight', () => {
        const lower = lease(1, signal, 'sheddable');
        report('w1', 70);
        lower.release();
        expect(() => sut.acquire(M, 1, signal, 'critical')).toThrow(OVERLOAD_MESSAGE);
      });

      it('leaves the queue when its client goes away, making room for another', async () => {
        lease(1, signal, 'standard');
        report('w1', 70);
        const controller = new AbortController();
        const gone = waitFor(1, controller, 'critical');
        expect(() => sut.acquire(M, 1, signal, 'critical')).toThrow(OVERLOAD_MESSAGE);
        controller.abort();
        await expect(gone).rejects.toThrow(/client went away/);
        expect(queued.dec).toHaveBeenCalledTimes(1);
        const next = waitFor(1, signal, 'critical');
        report('w1', 10);
        await expect(next).resolves.toMatchObject({ worker: { id: 'w1' } });
      });

      it('is refused after the queue timeout', async () => {
        lease(1, signal, 'standard');
        report('w1', 70);
        const pending = waitFor(1, signal, 'critical');
        const outcome = expect(pending).rejects.toThrow(/timed out waiting in the router queue/);
        jest.advanceTimersByTime(5000);
        await outcome;
        // Its place is free again.
        void waitFor(1, signal, 'critical').catch(() => undefined);
      });

      it('goes to a busy worker at once in shadow mode', () => {
        thresholds.setOverride(M, { admissionControl: 'shadow' });
        lease(1, signal, 'standard');
        report('w1', 70);
        expect(lease(1, signal, 'critical').worker.id).toBe('w1');
      });
    });

    describe('without a queue threshold, a tenant under its fair share (decision 0230)', () => {
      // Decode threshold 0.5: critical 0.6. Each 1-token lease reserves 1 block.
      const a = { id: 'a', weight: 1 };
      const b = { id: 'b', weight: 1 };
      const ask = (tenant: RequestTenant) =>
        sut.acquire(M, 1, signal, 'standard', 0, 'chat_completions', tenant);
      /** A request of `tenant` sent to a worker at once. */
      const sent = (tenant: RequestTenant): Lease => {
        const got = ask(tenant);
        if (got instanceof Promise) throw new Error('expected an immediate lease, got queued');
        return got;
      };
      beforeEach(() => {
        build(HALF_WITHOUT_QUEUE_THRESHOLD);
        report('w1');
      });

      it('is sent at once to a worker busy for its class but not for the class above', () => {
        sent(a);
        sent(a);
        report('w1', 52); // + 2 reserved: busy for standard, not for critical
        // a holds two of two: over its share, refused.
        expect(() => ask(a)).toThrow(OVERLOAD_MESSAGE);
        // b holds nothing: under its share, it takes the critical headroom instead of waiting.
        expect(sent(b).worker.id).toBe('w1');
        expect(queued.inc).not.toHaveBeenCalled();
      });

      it('waits when the worker is busy for the class above too, and takes its headroom once free', async () => {
        sent(a);
        sent(a);
        report('w1', 60); // + 2 reserved: busy for critical as well
        const waiting = ask(b);
        expect(waiting).toBeInstanceOf(Promise);
        // Still busy for standard, no longer for critical: the waiter, itself left out of its
        // tenant's count, is still under its share and is served.
        report('w1', 52);
        await expect(waiting).resolves.toMatchObject({ worker: { id: 'w1' } });
      });

      it("counts a request retried on another worker for its tenant's share", () => {
        report('w2');
        const first = sent(a);
        sent(b);
        // a's request failed on its worker and moves on; it still holds one of two.
        const retried = sut.acquireOther(new Set([first.worker]), 1, 'standard', 0, a);
        first.release();
        expect(retried?.worker.id).not.toBe(first.worker.id);
        report('w1', 52);
        report('w2', 52);
        // Both workers busy for standard: a (one of two) is not under its share, so refused.
        expect(() => ask(a)).toThrow(OVERLOAD_MESSAGE);
      });

      it('never lifts a tenant at or over its share, nor a lone tenant', () => {
        sent(a);
        report('w1', 52);
        expect(() => ask(a)).toThrow(OVERLOAD_MESSAGE);
      });
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

  it('reserves the KV blocks of a leased request on its worker until it ends (issue 14)', () => {
    build({ routerQueueThreshold: null });
    report('w1');
    // 10 prompt + 1430 output tokens: 90 blocks of 16, not over 0.9 of 100.
    const big = sut.acquire(M, 10, signal, 'standard', 1430) as Lease;
    expect(big.worker.busy).toBe(false);
    const small = lease(6); // one more block: over
    expect(small.worker.busy).toBe(true);
    expect(() => sut.acquire(M, 1, signal)).toThrow(ServiceOverloadedError);
    big.release();
    expect(small.worker.busy).toBe(false);
    small.release();
    expect(small.worker.reservations.size).toBe(0);
  });

  it('tells each lease the prompt tokens ahead of it on the worker when it was sent', () => {
    report('w1');
    const a = lease(40);
    const b = lease(2);
    expect([a.tokensAhead, b.tokensAhead]).toEqual([0, 40]);
    a.firstToken();
    expect(lease(1).tokensAhead).toBe(2);
  });

  describe('with a TTFT objective (docs/operations.md#ttft-objective)', () => {
    // Seed of a worker stepping 100 tokens: 20 ms + 1 ms per token ahead or in the prompt.
    const objective = (ttftSloMs: number | null, over: FrontendConfigValues = {}): void => {
      build({ routerQueueThreshold: null, ...over });
      thresholds.setOverride(M, { ttftSloMs });
    };
    const refusalOf = (tokens: number, c: PriorityClass = 'standard'): unknown => {
      try {
        const got = sut.acquire(M, tokens, signal, c);
        if (got instanceof Promise) return 'queued';
      } catch (err) {
        return err instanceof ServiceOverloadedError ? err.refusal : err;
      }
      return undefined;
    };

    it('routes to the worker with the lowest predicted TTFT, with its prediction', () => {
      objective(1000);
      report('w1');
      report('w2');
      for (let i = 0; i < 5; i++) predictor.observe('w1', 0, 0, 0, 400); // w1 is slow
      const leases = [lease(10), lease(10), lease(10)];
      expect(leases.map((l) => l.worker.id)).toEqual(['w2', 'w2', 'w2']);
      expect(leases[0].objective).toEqual({ predictedMs: 30, objectiveMs: 1000, sample: false });
    });

    // A 1-token request of ours waiting for its first token on each worker: none can be explored.
    // Its KV block (1 of 100) adds 0.01 × SEED_FULL_KV_MS = 0.34 ms to the worker's predictions.
    it('refuses with the overload answer when every free worker is predicted over it', () => {
      objective(30);
      report('w1');
      report('w2');
      expect([lease(1).worker.id, lease(1).worker.id]).toEqual(['w1', 'w2']);
      expect(refusalOf(50)).toBe(OBJECTIVE_MISSED);
      expect(OBJECTIVE_MISSED.payload.toString()).toBe(
        JSON.stringify({ message: OVERLOAD_MESSAGE, type: 'service_unavailable', code: 503 }),
      );
      expect(lease(8).objective?.predictedMs).toBeCloseTo(29.34);
    });

    it('explores a worker with nothing of ours waiting for its first token instead of refusing', () => {
      objective(30);
      report('w1');
      report('w2');
      const held = lease(1);
      const probe = lease(50); // 70 ms > 30 on both: the one with nothing of ours in prefill
      expect([held.worker.id, probe.worker.id]).toEqual(['w1', 'w2']);
      expect(probe.objective).toEqual({ predictedMs: 70, objectiveMs: 30, sample: false });
      expect(refusalOf(50)).toBe(OBJECTIVE_MISSED); // one exploration at a time per worker
      probe.firstToken();
      expect(refusalOf(50)).toBe(OBJECTIVE_MISSED); // and one per --explore-interval-ms
      jest.advanceTimersByTime(1000);
      expect(lease(50).worker.id).toBe('w2');
    });

    it('judges each class by the objective × its factor: critical looser, sheddable tighter', () => {
      objective(30);
      report('w1');
      lease(1); // 21 ms: admitted, and w1 cannot be explored while it waits
      expect(refusalOf(12, 'standard')).toBe(OBJECTIVE_MISSED); // 33.34 > 30
      const crit = lease(12, signal, 'critical'); // 33.34 <= 36
      expect(crit.objective?.objectiveMs).toBe(36);
      crit.release();
      expect(refusalOf(5, 'sheddable')).toBe(OBJECTIVE_MISSED); // 26.34 > 24
      expect(lease(2, signal, 'sheddable').objective?.objectiveMs).toBe(24); // 23.34
    });

    it('admits and counts a would-be refusal in shadow mode', () => {
      objective(30, { admissionControl: 'shadow' });
      report('w1');
      lease(1);
      wouldReject.mockClear();
      expect(lease(50).worker.id).toBe('w1');
      expect(wouldReject).toHaveBeenCalledWith(M, 'chat_completions', 'standard');
    });

    it('admits the --ttft-slo-sample share of would-be refusals, marked as samples', () => {
      objective(30, { ttftSloSample: 1 });
      report('w1');
      lease(1);
      expect(lease(50).objective).toEqual({
        predictedMs: expect.closeTo(71.34),
        objectiveMs: 30,
        sample: true,
      });
    });

    it('refuses a queued request once it can no longer make its deadline, without serving it', async () => {
      build({ routerQueueThreshold: 1 });
      report('w1');
      const holder = lease(150); // over 1 × 100 tokens in flight: the next one queues
      holder.firstToken(); // its prompt is prefilled: predictions are back to the seed's
      thresholds.setOverride(M, { ttftSloMs: 100 });
      let outcome: unknown = 'waiting';
      void waitFor(1).then(
        () => (outcome = 'served'),
        (err: ServiceOverloadedError) => (outcome = err.refusal),
      );
      await jest.advanceTimersByTimeAsync(60);
      expect(outcome).toBe('waiting');
      // Due at arrival + 100 ms; 21 ms predicted: late from 79 ms on.
      await jest.advanceTimersByTimeAsync(40);
      expect(outcome).toBe(OBJECTIVE_MISSED);
      expect(traffic.peek(holder.worker).requests).toBe(1);
      holder.release();
      expect(traffic.peek(holder.worker).requests).toBe(0);
    });

    it('serves a queued request that can still make its deadline when a worker frees up', async () => {
      build({ routerQueueThreshold: 1 });
      report('w1');
      const holder = lease(150);
      holder.firstToken();
      thresholds.setOverride(M, { ttftSloMs: 100 });
      const queuedLease = waitFor(1);
      await jest.advanceTimersByTimeAsync(30);
      holder.release();
      const got = await queuedLease;
      expect(got.worker.id).toBe('w1');
      expect(got.objective?.objectiveMs).toBe(100);
    });
  });
});
