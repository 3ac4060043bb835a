import { Logger } from '@nestjs/common';
import { FrontendConfigValues } from '../../config/frontend-config';
import { ModelEntry } from '../../worker-monitor/worker-entry';
import { M, routingFixture, RoutingFixture } from './routing.fixture';
import { WorkerChoice } from './worker-choice';

describe('WorkerChoice', () => {
  let fx: RoutingFixture;
  let sut: WorkerChoice;

  const build = (over: FrontendConfigValues = {}): void => {
    fx = routingFixture(over);
    sut = new WorkerChoice(fx.config, fx.traffic, fx.thresholds, fx.predictor);
  };
  const model = (): ModelEntry => {
    const m = fx.registry.model(M);
    if (!m) throw new Error('no model');
    return m;
  };
  const ids = (ws: readonly { id: string }[]) => ws.map((w) => w.id).sort();

  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  it("offers the class's free workers; every worker when none is free and the model does not enforce", () => {
    build();
    fx.report('free', 10);
    fx.report('busy', 95);
    expect(ids(sut.candidates(model(), 'standard'))).toEqual(['free']);
    fx.report('free', 95);
    expect(sut.candidates(model(), 'standard')).toEqual([]);
    expect(sut.pick(model(), 'standard')).toBeUndefined();
    fx.thresholds.setOverride(M, { admissionControl: 'shadow' });
    expect(ids(sut.candidates(model(), 'standard'))).toEqual(['busy', 'free']);
    expect(sut.pick(model(), 'standard')).toBeDefined();
  });

  it('leaves out a worker over F × max_num_batched_tokens in flight, only with a router queue', () => {
    build();
    fx.report('w1');
    const w1 = model().workers.get('w1');
    if (!w1) throw new Error('no worker w1');
    fx.traffic.of(w1).promptTokens = 100;
    expect(sut.eligible?.(w1)).toBe(true);
    fx.traffic.of(w1).promptTokens = 101;
    expect(sut.eligible?.(w1)).toBe(false);
    expect(sut.pick(model(), 'standard')).toBeUndefined();
    build({ routerQueueThreshold: null });
    expect(sut.eligible).toBeNull();
  });

  it('finds the lowest predicted time to first token among the candidates', () => {
    build();
    fx.report('w1');
    fx.report('w2');
    for (let i = 0; i < 5; i++) fx.predictor.observe('w2', 0, 0, 0, 400);
    const best = sut.lowest(sut.candidates(model(), 'standard'), 10);
    expect([best?.worker.id, best?.ms]).toEqual(['w1', 30]);
    const onlyW2 = sut.lowest(sut.candidates(model(), 'standard'), 10, (w) => w.id === 'w2');
    expect(onlyW2?.worker.id).toBe('w2');
    expect(onlyW2?.ms).toBeGreaterThan(30);
  });

  // The seed of the fixture's workers: 20 ms + 1 ms per token of work + 34 ms at full KV use.
  it('breaks a near-tie of predictions (within PREDICTION_TIE) by the fewest tokens ahead', () => {
    build();
    fx.report('w1');
    const w1 = model().workers.get('w1');
    if (!w1) throw new Error('no worker w1');
    fx.registry.reserve(w1, 5, 0, Date.now()); // 5 tokens ahead, 1 KV block: 35.34 ms for 10
    fx.report('w2', 16); // nothing ahead, 16 % KV: 35.44 ms for 10
    const near = sut.lowest(sut.candidates(model(), 'standard'), 10);
    expect([near?.worker.id, near?.ms]).toEqual(['w2', expect.closeTo(35.44, 2)]);
    fx.report('w2', 30); // 40.2 ms: 14 % over w1, no tie
    const far = sut.lowest(sut.candidates(model(), 'standard'), 10);
    expect([far?.worker.id, far?.ms]).toEqual(['w1', expect.closeTo(35.34, 2)]);
  });
});
