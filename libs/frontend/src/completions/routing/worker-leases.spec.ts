import { TenantShares } from '../../admission/tenant-shares';
import { Logger } from '@nestjs/common';
import { CriticalWait } from '../../admission/critical-wait';
import { WorkerEntry } from '../../worker-monitor/worker-entry';
import { M, routingFixture, RoutingFixture } from './routing.fixture';
import { WorkerLeases } from './worker-leases';

describe('WorkerLeases', () => {
  let fx: RoutingFixture;
  let released: jest.Mock;
  let sut: WorkerLeases;
  let w1: WorkerEntry;
  let criticalWait: CriticalWait;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    fx = routingFixture({ routerQueueThreshold: null });
    fx.report('w1');
    released = jest.fn();
    criticalWait = new CriticalWait();
    sut = new WorkerLeases(
      fx.registry,
      fx.traffic,
      released,
      criticalWait,
      fx.ejection,
      new TenantShares(),
    );
    const w = fx.registry.model(M)?.workers.get('w1');
    if (!w) throw new Error('no worker w1');
    w1 = w;
  });

  it('counts a lease in flight, waiting for prefill and reserved, until released once', () => {
    const objective = { predictedMs: 30, objectiveMs: 100, sample: false };
    const a = sut.lease(w1, 'standard', 40, 0, objective);
    const b = sut.lease(w1, 'standard', 2, 0, null);
    expect([a.tokensAhead, b.tokensAhead, a.objective, b.objective]).toEqual([
      0,
      40,
      objective,
      null,
    ]);
    // The KV usage each was sent with: a's 3 blocks (40 tokens of 16) of the 100 count for b.
    expect([a.kvUsage, b.kvUsage]).toEqual([0, 0.03]);
    expect(fx.traffic.peek(w1)).toEqual({ requests: 2, prefilling: 2, promptTokens: 42 });
    expect([w1.pendingPrefillTokens, w1.reservations.size]).toEqual([42, 2]);
    a.firstToken();
    a.firstToken();
    expect(w1.pendingPrefillTokens).toBe(2);
    expect(fx.traffic.peek(w1)).toEqual({ requests: 2, prefilling: 1, promptTokens: 42 });
    a.release();
    a.release();
    b.release(); // ended before its first token: no longer waiting for prefill either
    expect(fx.traffic.peek(w1)).toEqual({ requests: 0, prefilling: 0, promptTokens: 0 });
    expect([w1.pendingPrefillTokens, w1.reservations.size]).toEqual([0, 0]);
    expect(released.mock.calls).toEqual([[w1], [w1]]);
  });

  it('counts lower-class leases in flight for CriticalWait, critical ones not', () => {
    const critical = sut.lease(w1, 'critical', 1, 0, null);
    expect(criticalWait.mayWait(M)).toBe(false);
    const sheddable = sut.lease(w1, 'sheddable', 1, 0, null);
    expect(criticalWait.mayWait(M)).toBe(true);
    criticalWait.queued(M); // one critical waiter per lower-class request in flight
    expect(criticalWait.mayWait(M)).toBe(false);
    criticalWait.left(M);
    sheddable.release();
    sheddable.release();
    critical.release();
    expect(criticalWait.mayWait(M)).toBe(false);
  });
});
