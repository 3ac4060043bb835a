import { HealthIndicatorService } from '@nestjs/terminus';
import { ThresholdRepository } from '../thresholds/persistence';
import { ThresholdSyncService } from '../thresholds/threshold-sync.service';
import { BusStateService } from '../worker-monitor/bus-state.service';
import { HealthIndicators } from './health.indicators';
import { LifecycleService } from '../admission/lifecycle.service';

describe('HealthIndicators.databaseHealth', () => {
  let pings: number;
  let answer: (() => void) | undefined;
  let indicators: HealthIndicators;

  beforeEach(() => {
    jest.useFakeTimers();
    pings = 0;
    answer = undefined;
    const repository = {
      ping: () => {
        pings++;
        return new Promise<void>((resolve) => (answer = resolve));
      },
    } as unknown as ThresholdRepository;
    indicators = new HealthIndicators(
      new HealthIndicatorService(),
      {} as BusStateService,
      repository,
      {} as LifecycleService,
      {} as ThresholdSyncService,
    );
  });

  afterEach(() => jest.useRealTimers());

  it('reports down after 1 s without an answer, and probes meanwhile share one ping', async () => {
    const first = indicators.databaseHealth();
    const second = indicators.databaseHealth();
    jest.advanceTimersByTime(1000);
    // The driver's text stays in the log: /health answers anyone.
    await expect(first).resolves.toEqual({
      database: { status: 'down', message: 'the threshold database does not answer' },
    });
    await expect(second).resolves.toMatchObject({ database: { status: 'down' } });
    // The hung ping is still pending: a later probe waits on it instead of sending another.
    const third = indicators.databaseHealth();
    jest.advanceTimersByTime(1000);
    await expect(third).resolves.toMatchObject({ database: { status: 'down' } });
    expect(pings).toBe(1);
  });

  it('sends a new ping once the previous one has settled', async () => {
    const first = indicators.databaseHealth();
    answer?.();
    await expect(first).resolves.toMatchObject({ database: { status: 'up' } });
    const second = indicators.databaseHealth();
    answer?.();
    await expect(second).resolves.toMatchObject({ database: { status: 'up' } });
    expect(pings).toBe(2);
  });
});

describe('HealthIndicators.thresholdsLoaded', () => {
  const sut = (loadedOnce: boolean): HealthIndicators =>
    new HealthIndicators(
      new HealthIndicatorService(),
      {} as BusStateService,
      {} as ThresholdRepository,
      {} as LifecycleService,
      { loadedOnce } as ThresholdSyncService,
    );

  it('is down until the stored thresholds were loaded once, then up for good', () => {
    expect(sut(false).thresholdsLoaded()).toMatchObject({ thresholds: { status: 'down' } });
    expect(sut(true).thresholdsLoaded()).toMatchObject({ thresholds: { status: 'up' } });
  });
});
