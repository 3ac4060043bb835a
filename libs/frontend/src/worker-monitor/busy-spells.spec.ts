import { Logger } from '@nestjs/common';
import { parsedReport } from '@sluice/testkit';
import { FrontendConfig } from '../config/frontend-config';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { BusySpells } from './busy-spells';
import { WorkerRegistry } from './worker-registry.service';

const M = 'm';

describe('BusySpells (the estimate behind --retry-after-secs auto)', () => {
  let registry: WorkerRegistry;
  let sut: BusySpells;

  const build = (retryAfterSecs: number | 'auto' = 'auto'): void => {
    const config = new FrontendConfig({ retryAfterSecs, thresholds: { activeDecodeBlocks: 0.5 } });
    registry = new WorkerRegistry(config, new ThresholdsService(config));
    sut = new BusySpells(config, registry);
  };
  /** Worker `id` reports `used` of 100 blocks now: busy above 50. */
  const report = (id: string, used: number): void => {
    registry.applyReport(parsedReport(id, { model: M, activeDecodeBlocks: used }), Date.now());
  };
  /** Worker `id` is busy for `ms`, then free. */
  const spell = (id: string, ms: number): void => {
    report(id, 90);
    jest.advanceTimersByTime(ms);
    report(id, 10);
  };
  const wait = (): number | undefined => sut.expectedWaitMs(M, Date.now());

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
    build();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('has no estimate before a spell of the model has ended', () => {
    expect(wait()).toBeUndefined();
    report('w1', 90);
    jest.advanceTimersByTime(5000);
    expect(wait()).toBeUndefined();
    expect(sut.expectedWaitMs('other', Date.now())).toBeUndefined();
  });

  it('expects the mean spell minus what the current spell has lasted', () => {
    spell('w1', 3000);
    expect(sut.meanMs(M)).toBe(3000);
    expect(wait()).toBe(0); // w1 is free now
    report('w1', 90);
    jest.advanceTimersByTime(500);
    expect(wait()).toBe(2500);
    jest.advanceTimersByTime(4000);
    expect(wait()).toBe(0); // overdue
  });

  it('weights the newest spell by 0.3 in the mean', () => {
    spell('w1', 3000);
    spell('w1', 1000);
    expect(sut.meanMs(M)).toBeCloseTo(3000 + 0.3 * (1000 - 3000));
  });

  it('takes the worker busy the longest: it is the one expected free first', () => {
    spell('w1', 4000);
    report('w1', 90);
    jest.advanceTimersByTime(1000);
    report('w2', 90);
    jest.advanceTimersByTime(500);
    expect(registry.model(M)?.allBusy).toBe(true);
    expect(wait()).toBe(4000 - 1500);
    report('w1', 10); // w1 free: w2's spell is the oldest, but a worker is free now
    expect(wait()).toBe(0);
    report('w1', 90);
    expect(wait()).toBe(4000 * 0.7 + 1500 * 0.3 - 500);
  });

  it('forgets the spell of a worker removed while busy, and a forgotten model', () => {
    spell('w1', 2000);
    report('w2', 90);
    registry.removeWorker('w2', 'worker_down');
    report('w1', 90);
    jest.advanceTimersByTime(100);
    report('w1', 10);
    expect(sut.meanMs(M)).toBeCloseTo(2000 * 0.7 + 100 * 0.3);
    sut.modelForgotten(M);
    expect(sut.meanMs(M)).toBeUndefined();
  });

  it('measures nothing with a fixed --retry-after-secs', () => {
    build(1);
    spell('w1', 3000);
    expect(sut.meanMs(M)).toBeUndefined();
  });
});
