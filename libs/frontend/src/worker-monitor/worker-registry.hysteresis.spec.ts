import { Logger } from '@nestjs/common';
import { KvMetricsReport } from '@sluice/contracts';
import { parsedReport } from '@sluice/testkit';
import { FrontendConfig, FrontendConfigValues } from '../config/frontend-config';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { WorkerRegistry } from './worker-registry.service';

const M = 'm';

/** Hysteresis and dwell (docs/operations.md#hysteresis-and-dwell) on one worker of one rank; decode threshold 0.8 of 100. */
describe('WorkerRegistry: --busy-release-factor and --busy-min-dwell-ms', () => {
  let thresholds: ThresholdsService;
  let flips: boolean[];
  let sut: WorkerRegistry;

  const build = (over: FrontendConfigValues = {}): void => {
    const config = new FrontendConfig({ thresholds: { activeDecodeBlocks: 0.8 }, ...over });
    thresholds = new ThresholdsService(config);
    sut = new WorkerRegistry(config, thresholds);
    flips = [];
    // docs/architecture.md#busy-rule's busy state: the standard class's (the others flip at their own limits).
    sut.observe({ busyChanged: (w, c) => void (c === 'standard' && flips.push(w.busy)) });
  };
  /** Applies a report of `used` of 100 blocks now (the fake clock's now). */
  const report = (used: number, over: Partial<KvMetricsReport> = {}): void => {
    sut.applyReport(parsedReport('w', { model: M, activeDecodeBlocks: used, ...over }), Date.now());
  };
  const busy = (): boolean | undefined => sut.model(M)?.workers.get('w')?.busy;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    sut.onModuleDestroy();
    jest.useRealTimers();
  });

  it('keeps today’s rule by default: free at the threshold, busy above it, no timer', () => {
    build();
    const seen = [81, 80, 81, 79].map((used) => (report(used), busy()));
    expect(seen).toEqual([true, false, true, false]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('with a release factor, a busy rank hovering at the threshold stays busy until ≤ threshold × F', () => {
    build({ busyReleaseFactor: 0.5 });
    // 0.8 × 0.5 = 0.4: once busy, 41 of 100 is still busy, 40 is free; a free rank uses 0.8.
    const seen = [81, 79, 80, 81, 60, 41, 40, 79, 80, 81].map((used) => (report(used), busy()));
    expect(seen).toEqual([true, true, true, true, true, true, false, false, false, true]);
    expect(flips).toEqual([true, false, true]);
  });

  it('with a dwell, holds a new busy state through a free report, then frees without a report', () => {
    build({ busyMinDwellMs: 1000 });
    report(95);
    jest.advanceTimersByTime(100);
    report(10);
    expect(busy()).toBe(true);
    jest.advanceTimersByTime(899);
    expect(busy()).toBe(true);
    jest.advanceTimersByTime(1);
    expect(busy()).toBe(false);
    expect(flips).toEqual([true, false]);
  });

  it('holds a new free state as long, and re-judges on the load of the moment the dwell ends', () => {
    build({ busyMinDwellMs: 1000 });
    report(95);
    jest.advanceTimersByTime(1000);
    report(10); // free at once: the busy dwell is over
    expect(busy()).toBe(false);
    report(95);
    expect(busy()).toBe(false);
    jest.advanceTimersByTime(500);
    report(50); // back under the threshold before the dwell ends: no flip at its end
    jest.advanceTimersByTime(500);
    expect(busy()).toBe(false);
    report(95);
    jest.advanceTimersByTime(10_000);
    expect(flips).toEqual([true, false, true]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('combines both: a held busy rank is released only below threshold × F', () => {
    build({ busyReleaseFactor: 0.5, busyMinDwellMs: 1000 });
    report(95);
    report(60); // between 0.4 and 0.8: busy anyway
    jest.advanceTimersByTime(1000);
    expect(busy()).toBe(true);
    report(30);
    expect(busy()).toBe(false);
  });

  it('applies a threshold change at once, dwell or not, and the change it makes starts a dwell', () => {
    build({ busyMinDwellMs: 1000 });
    report(85);
    expect(busy()).toBe(true);
    jest.advanceTimersByTime(100);
    thresholds.setOverride(M, { activeDecodeBlocks: 0.9 });
    expect(busy()).toBe(false);
    jest.advanceTimersByTime(100);
    report(95); // over 0.9, but the rank is within the dwell its change started
    expect(busy()).toBe(false);
    jest.advanceTimersByTime(900);
    expect(busy()).toBe(true);
  });

  it('judges a busy rank with the release factor against the new threshold after a change', () => {
    build({ busyReleaseFactor: 0.5 });
    report(85);
    thresholds.setOverride(M, { activeDecodeBlocks: 0.9 }); // 85 > 0.9 × 0.5: still busy
    expect(busy()).toBe(true);
    thresholds.setOverride(M, { activeDecodeBlocks: 1 }); // 85 > 0.5: still busy
    expect(busy()).toBe(true);
    report(50);
    expect(busy()).toBe(false);
  });

  it('forgets the dwell of a worker that goes away', () => {
    build({ busyMinDwellMs: 1000 });
    report(95);
    report(10);
    sut.removeWorker('w', 'worker_down');
    jest.advanceTimersByTime(1000);
    expect(sut.model(M)?.workers.size).toBe(0);
    expect(flips).toEqual([true]);
    expect(jest.getTimerCount()).toBe(0);
  });
});
