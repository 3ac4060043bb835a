import { Logger } from '@nestjs/common';
import { ServiceOverloadedError } from '../../admission/errors/service-overloaded.error';
import { OBJECTIVE_MISSED } from '../../admission/refusal';
import { FrontendConfigValues } from '../../config/frontend-config';
import { PriorityClass } from '../../config/priority';
import { RequestMetricsService } from '../../request-metrics/request-metrics.service';
import { WorkerEntry } from '../../worker-monitor/worker-entry';
import { Ask } from './ask';
import { Admit, ObjectiveGate, Queue } from './objective-gate';
import { M, routingFixture, RoutingFixture } from './routing.fixture';
import { EXPLORE_UNCHECKED_MS, WorkerChoice } from './worker-choice';

// The seed of a worker stepping 100 tokens predicts 20 ms + 1 ms per prompt token.
describe('ObjectiveGate', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  let fx: RoutingFixture;
  let sut: ObjectiveGate;
  const wouldReject = jest.fn();
  const explored = jest.fn();

  const build = (over: FrontendConfigValues = {}, ttftSloMs: number | null = 30): void => {
    fx = routingFixture({ routerQueueThreshold: null, ...over });
    const choice = new WorkerChoice(fx.config, fx.traffic, fx.thresholds, fx.predictor);
    const metrics = { wouldReject, explored } as unknown as RequestMetricsService;
    sut = new ObjectiveGate(fx.config, fx.thresholds, metrics, choice);
    fx.thresholds.setOverride(M, { ttftSloMs });
  };
  const ask = (promptTokens: number, priority: PriorityClass = 'standard'): Ask => {
    const model = fx.registry.model(M);
    if (!model) throw new Error('no model');
    return { model, promptTokens, maxTokens: 0, priority, endpoint: 'chat_completions' };
  };
  const worker = (id: string): WorkerEntry => {
    const w = fx.registry.model(M)?.workers.get(id);
    if (!w) throw new Error(`no worker ${id}`);
    return w;
  };
  /** A request of ours waits for its first token on the worker: it cannot be explored. */
  const prefilling = (...ids: string[]): void => {
    for (const id of ids) fx.traffic.of(worker(id)).prefilling = 1;
  };
  const admitted = (v: Admit | Queue | 'wait' | 'late' | undefined) =>
    v !== undefined && typeof v !== 'string' && 'best' in v
      ? { worker: v.best.worker.id, ms: v.best.ms, objectiveMs: v.objectiveMs, sample: v.sample }
      : v;
  const refusalOf = (fn: () => unknown): unknown => {
    try {
      return fn();
    } catch (err) {
      return err instanceof ServiceOverloadedError ? err.refusal : err;
    }
  };

  beforeEach(() => {
    jest.useFakeTimers();
    wouldReject.mockClear();
    explored.mockClear();
    build();
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it("reads each class's objective: the model's × the class's factor, null without one", () => {
    expect(
      (['critical', 'standard', 'sheddable'] as const).map((c) => sut.objectiveOf(M, c)),
    ).toEqual([36, 30, 24]);
    fx.thresholds.setOverride(M, { ttftSloMs: null });
    expect(sut.objectiveOf(M, 'standard')).toBeNull();
  });

  it('admits to the free worker with the lowest prediction when it is within the objective', () => {
    fx.report('w1');
    fx.report('w2');
    for (let i = 0; i < 5; i++) fx.predictor.observe('w1', 0, 0, 0, 400);
    expect(admitted(sut.atArrival(ask(10), 30, 0))).toEqual({
      worker: 'w2',
      ms: 30,
      objectiveMs: 30,
      sample: false,
    });
  });

  it('refuses with the objective refusal when every free worker is predicted over it', () => {
    fx.report('w1');
    prefilling('w1');
    expect(refusalOf(() => sut.atArrival(ask(11), 30, 0))).toBe(OBJECTIVE_MISSED);
    // Every worker busy for the class, enforcing: the plain busy refusal (no candidate at all).
    fx.report('w1', 95);
    expect(refusalOf(() => sut.atArrival(ask(1), 30, 0))).not.toBe(OBJECTIVE_MISSED);
  });

  it('admits a would-be refusal as a sample with --ttft-slo-sample, by an independent draw', () => {
    build({ ttftSloSample: 0.5 });
    fx.report('w1');
    prefilling('w1');
    const draw = jest.spyOn(Math, 'random').mockReturnValue(0.4);
    expect(admitted(sut.atArrival(ask(50), 30, 0))).toMatchObject({ ms: 70, sample: true });
    draw.mockReturnValue(0.6);
    expect(refusalOf(() => sut.atArrival(ask(50), 30, 0))).toBe(OBJECTIVE_MISSED);
  });

  it('admits a would-be refusal in shadow mode and counts it, unless every worker is busy', () => {
    build({ admissionControl: 'shadow' });
    fx.report('w1');
    prefilling('w1');
    expect(admitted(sut.atArrival(ask(50), 30, 0))).toMatchObject({ worker: 'w1', sample: false });
    expect(wouldReject).toHaveBeenCalledWith(M, 'chat_completions', 'standard');
    wouldReject.mockClear();
    fx.report('w1', 95); // counted by the admission guard already
    expect(admitted(sut.atArrival(ask(50), 30, 0))).toMatchObject({ worker: 'w1' });
    expect(wouldReject).not.toHaveBeenCalled();
  });

  it('admits a would-be refusal uncounted with admission control none', () => {
    build({ admissionControl: 'none' });
    fx.report('w1');
    expect(admitted(sut.atArrival(ask(50), 30, 0))).toMatchObject({ worker: 'w1', ms: 70 });
    expect(wouldReject).not.toHaveBeenCalled();
  });

  describe('exploration (a would-be refusal on a worker whose prediction goes unchecked)', () => {
    it('admits to the worker with nothing of ours waiting for its first token instead', () => {
      fx.report('w1');
      fx.report('w2');
      for (let i = 0; i < 5; i++) fx.predictor.observe('w2', 0, 0, 0, 400); // inflated fit
      prefilling('w1');
      // w1 31 ms, w2 ~400 ms, both over 30: w2 is the one to explore.
      const got = admitted(sut.atArrival(ask(11), 30, 0));
      expect(got).toMatchObject({ worker: 'w2', objectiveMs: 30, sample: false });
      prefilling('w2'); // one exploration at a time per worker
      expect(refusalOf(() => sut.atArrival(ask(11), 30, 0))).toBe(OBJECTIVE_MISSED);
    });

    it('explores a worker with none of ours in flight at once, however recent its first token', () => {
      fx.report('w1');
      for (let i = 0; i < 5; i++) fx.predictor.observe('w1', 0, 0, 0, 400);
      expect(admitted(sut.atArrival(ask(11), 30, 0))).toMatchObject({
        worker: 'w1',
        sample: false,
      });
    });

    it('does not explore a worker whose first tokens keep checking its prediction', () => {
      fx.report('w1');
      for (let i = 0; i < 5; i++) fx.predictor.observe('w1', 0, 0, 0, 400); // a first token now
      fx.traffic.of(worker('w1')).requests = 2; // ours, past their first token: decoding
      expect(refusalOf(() => sut.atArrival(ask(11), 30, 0))).toBe(OBJECTIVE_MISSED);
      jest.advanceTimersByTime(EXPLORE_UNCHECKED_MS - 1);
      expect(refusalOf(() => sut.atArrival(ask(11), 30, 0))).toBe(OBJECTIVE_MISSED);
      // No first token there for EXPLORE_UNCHECKED_MS: the fit may have drifted, explore it.
      jest.advanceTimersByTime(1);
      expect(admitted(sut.atArrival(ask(11), 30, 0))).toMatchObject({
        worker: 'w1',
        sample: false,
      });
      // Its first token checks the fit again.
      fx.predictor.observe('w1', 11, 0, 0, 400);
      expect(refusalOf(() => sut.atArrival(ask(11), 30, 0))).toBe(OBJECTIVE_MISSED);
    });

    it('explores a worker at most once per --explore-interval-ms, and counts each', () => {
      build({ exploreIntervalMs: 5000 });
      fx.report('w1');
      for (let i = 0; i < 5; i++) fx.predictor.observe('w1', 0, 0, 0, 400);
      // Requests one after another: nothing of ours is ever in flight when the next arrives.
      expect(admitted(sut.atArrival(ask(11), 30, 0))).toMatchObject({ worker: 'w1' });
      expect(explored).toHaveBeenCalledTimes(1);
      expect(explored).toHaveBeenCalledWith(M);
      expect(refusalOf(() => sut.atArrival(ask(11), 30, 0))).toBe(OBJECTIVE_MISSED);
      jest.advanceTimersByTime(4999);
      expect(refusalOf(() => sut.atArrival(ask(11), 30, 0))).toBe(OBJECTIVE_MISSED);
      jest.advanceTimersByTime(1);
      expect(admitted(sut.atArrival(ask(11), 30, 0))).toMatchObject({ worker: 'w1' });
      expect(explored).toHaveBeenCalledTimes(2);
    });

    it('keeps the interval per worker: another worker is still explored', () => {
      fx.report('w1');
      fx.report('w2');
      for (const id of ['w1', 'w2']) {
        for (let i = 0; i < 5; i++) fx.predictor.observe(id, 0, 0, 0, 400);
      }
      const first = admitted(sut.atArrival(ask(11), 30, 0)) as { worker: string };
      const second = admitted(sut.atArrival(ask(11), 30, 0)) as { worker: string };
      expect([first.worker, second.worker].sort()).toEqual(['w1', 'w2']);
      expect(refusalOf(() => sut.atArrival(ask(11), 30, 0))).toBe(OBJECTIVE_MISSED);
    });

    it('explores the lowest prediction among such workers', () => {
      fx.report('w1');
      fx.report('w2');
      fx.report('w3');
      for (let i = 0; i < 5; i++) fx.predictor.observe('w2', 0, 0, 0, 400);
      prefilling('w1');
      expect(admitted(sut.atArrival(ask(50), 30, 0))).toMatchObject({ worker: 'w3', ms: 70 });
    });

    it('is not a would-be refusal: no sample drawn, not counted in shadow mode', () => {
      build({ admissionControl: 'shadow', ttftSloSample: 1 });
      fx.report('w1');
      expect(admitted(sut.atArrival(ask(50), 30, 0))).toEqual({
        worker: 'w1',
        ms: 70,
        objectiveMs: 30,
        sample: false,
      });
      expect(wouldReject).not.toHaveBeenCalled();
    });

    it('explores only workers the router queue leaves eligible', () => {
      build({ routerQueueThreshold: 1 }, 100);
      fx.report('w1');
      fx.traffic.of(worker('w1')).promptTokens = 150; // decoding, not eligible
      expect(refusalOf(() => sut.atArrival(ask(81), 100, 0))).toBe(OBJECTIVE_MISSED);
      fx.traffic.of(worker('w1')).promptTokens = 100;
      expect(admitted(sut.atArrival(ask(81), 100, 0))).toMatchObject({ worker: 'w1', ms: 101 });
    });
  });

  describe('with the router queue', () => {
    beforeEach(() => {
      build({ routerQueueThreshold: 1 }, 100);
      fx.report('w1');
    });

    it('queues with its deadline while waiters are ahead or no eligible worker is free', () => {
      const now = performance.now();
      expect(sut.atArrival(ask(1), 100, 1)).toEqual({ deadlineMs: now + 100 });
      fx.traffic.of(worker('w1')).promptTokens = 150; // over 1 × 100 in flight: not eligible
      expect(sut.atArrival(ask(1), 100, 0)).toEqual({ deadlineMs: now + 100 });
    });

    it('refuses at arrival when no free worker at all is predicted within the objective', () => {
      fx.traffic.of(worker('w1')).promptTokens = 150;
      expect(refusalOf(() => sut.atArrival(ask(81), 100, 0))).toBe(OBJECTIVE_MISSED);
    });

    it('serves a waiter that makes its deadline, keeps one that still can, drops one that cannot', () => {
      const deadline = performance.now() + 100;
      expect(admitted(sut.forWaiter(ask(1), deadline, 100))).toMatchObject({
        worker: 'w1',
        ms: 21,
      });
      fx.traffic.of(worker('w1')).promptTokens = 150;
      expect(sut.forWaiter(ask(1), deadline, 100)).toBe('wait');
      expect(sut.lateBy(ask(1), deadline, performance.now())).toBe(-79);
      jest.advanceTimersByTime(80);
      expect(sut.forWaiter(ask(1), deadline, 100)).toBe('late');
    });
  });

  it('retries on the lowest prediction among the other workers, never refusing', () => {
    fx.report('w1');
    fx.report('w2');
    const retry = sut.forRetry(ask(500), new Set([worker('w2')]), 30);
    expect(admitted(retry)).toEqual({ worker: 'w1', ms: 520, objectiveMs: 30, sample: false });
    fx.registry.removeWorker('w1', 'worker_down');
    expect(sut.forRetry(ask(1), new Set([worker('w2')]), 30)).toBeUndefined();
  });
});
