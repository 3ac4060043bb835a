import { Logger } from '@nestjs/common';
import { FrontendConfig, FrontendConfigValues } from '../config/frontend-config';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { OutlierEjection } from './outlier-ejection';
import { reportFor } from './report.fixture';
import { WorkerEntry } from './worker-entry';
import { WorkerRegistry } from './worker-registry.service';

const M = 'm';

describe('OutlierEjection', () => {
  let registry: WorkerRegistry;
  let sut: OutlierEjection;
  let ejections: number;

  const report = (id: string, used = 0): void => reportFor(registry, M, id, used);
  const worker = (id: string): WorkerEntry => registry.worker(id) as WorkerEntry;
  const free = (): string[] =>
    registry
      .model(M)!
      .free.map((w) => w.id)
      .sort();
  const failTimes = (id: string, n: number): void => {
    for (let i = 0; i < n; i++) sut.failed(worker(id), 'connect');
  };

  const build = (over: FrontendConfigValues = {}): void => {
    const config = new FrontendConfig({
      admissionControl: 'token-capacity',
      thresholds: { activeDecodeBlocks: 0.9, activePrefillTokens: null },
      ejectAfter: 3,
      ejectBackoffMs: 1000,
      ejectBackoffMaxMs: 3000,
      ...over,
    });
    registry = new WorkerRegistry(config, new ThresholdsService(config));
    ejections = 0;
    sut = new OutlierEjection(config, registry, { inc: () => void ejections++ } as never);
    report('a');
    report('b');
  };

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    jest.useFakeTimers();
    build();
  });
  afterEach(() => {
    sut.onModuleDestroy();
    jest.useRealTimers();
  });

  it('ejects a worker after --eject-after failures in a row, not when a success breaks the run', () => {
    failTimes('a', 2);
    sut.succeeded(worker('a'));
    failTimes('a', 2);
    expect(free()).toEqual(['a', 'b']);
    failTimes('a', 1);
    expect(free()).toEqual(['b']);
    expect(worker('a').inRouting).toBe(false);
    expect(ejections).toBe(1);
    expect(sut.view(worker('a'))).toMatchObject({ phase: 'ejected', ejections: 1 });
  });

  it("stops counting an ejected worker's load for the 503 decision, and counts it again when back", () => {
    report('b', 95);
    failTimes('a', 3);
    // b is busy and a is out of routing: every worker in routing is busy.
    expect(registry.model(M)!.allBusy).toBe(true);
    jest.advanceTimersByTime(1000);
    expect(sut.view(worker('a')).phase).toBe('probe');
    expect(registry.model(M)!.allBusy).toBe(false);
  });

  it('with every worker ejected, none is busy and none is routable', () => {
    failTimes('a', 3);
    failTimes('b', 3);
    expect(registry.model(M)!.routable).toBe(0);
    expect(registry.model(M)!.allBusy).toBe(false);
  });

  it('gives one probe after the backoff: success puts the worker back, failure doubles the backoff', () => {
    failTimes('a', 3);
    jest.advanceTimersByTime(999);
    expect(free()).toEqual(['b']);
    jest.advanceTimersByTime(1);
    expect(free()).toEqual(['a', 'b']);
    // The probe takes the worker out until its outcome.
    expect(sut.leased(worker('a'))).toBe(true);
    expect(free()).toEqual(['b']);
    sut.failed(worker('a'), 'status_5xx');
    sut.probeEnded(worker('a'));
    expect(sut.view(worker('a'))).toMatchObject({ phase: 'ejected', ejections: 2 });
    jest.advanceTimersByTime(1999);
    expect(free()).toEqual(['b']);
    jest.advanceTimersByTime(1);
    expect(sut.leased(worker('a'))).toBe(true);
    sut.succeeded(worker('a'));
    sut.probeEnded(worker('a'));
    expect(free()).toEqual(['a', 'b']);
    expect(sut.view(worker('a'))).toMatchObject({ phase: 'in', ejections: 0 });
    expect(sut.leased(worker('a'))).toBe(false);
  });

  it('caps the backoff at --eject-backoff-max-ms', () => {
    failTimes('a', 3);
    for (let i = 0; i < 4; i++) {
      jest.runOnlyPendingTimers();
      sut.leased(worker('a'));
      sut.failed(worker('a'), 'reset');
    }
    const { ejectedUntilMs } = sut.view(worker('a'));
    expect(ejectedUntilMs! - Date.now()).toBe(3000);
  });

  it('waits for another probe when the probe ends without an outcome', () => {
    failTimes('a', 3);
    jest.runOnlyPendingTimers();
    sut.leased(worker('a'));
    sut.probeEnded(worker('a'));
    expect(sut.view(worker('a')).phase).toBe('probe');
    expect(free()).toEqual(['a', 'b']);
  });

  it('never ejects with --eject-after 0', () => {
    build({ ejectAfter: 0 });
    failTimes('a', 100);
    expect(free()).toEqual(['a', 'b']);
  });

  it('forgets the state of a worker that is removed', () => {
    failTimes('a', 3);
    registry.removeWorker('a', 'worker_down');
    report('a');
    expect(free()).toEqual(['a', 'b']);
    expect(sut.view(worker('a')).phase).toBe('in');
    expect(registry.model(M)!.routable).toBe(2);
  });
});
