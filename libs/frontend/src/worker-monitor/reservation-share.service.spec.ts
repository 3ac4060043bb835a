import { Logger } from '@nestjs/common';
import { EventPublisher } from '@sluice/bus';
import { parsedReport } from '@sluice/testkit';
import { Counter, Gauge } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { MonitorTransport } from '../transport/monitor-transport';
import { PeerReservationsService } from './peer-reservations.service';
import { ReservationShareService } from './reservation-share.service';
import { WorkerRegistry } from './worker-registry.service';

describe('ReservationShareService', () => {
  let registry: WorkerRegistry;
  let published: Array<{ subject: string; payload: object }>;
  let sut: ReservationShareService;

  const build = (intervalMs: number): void => {
    const config = new FrontendConfig({
      reservationShareIntervalMs: intervalMs,
      reservationShareTtlMs: 2000,
      namespace: 'ns',
    });
    registry = new WorkerRegistry(config, new ThresholdsService(config));
    registry.applyReport(parsedReport('w1', { activeDecodeBlocks: 0, timestampMs: 0 }), 0);
    published = [];
    const publisher = {
      publish: (subject: string, payload: object) => published.push({ subject, payload }),
      close: () => Promise.resolve(),
    } as EventPublisher;
    const counter = () =>
      new Counter({ name: 'c', help: 'c', labelNames: ['outcome'], registers: [] });
    const transport = { nats: {} } as MonitorTransport;
    const peers = new PeerReservationsService(
      config,
      registry,
      counter(),
      new Gauge({ name: 'g', help: 'g', registers: [] }),
    );
    sut = new ReservationShareService(config, registry, transport, publisher, peers, counter());
    sut.onModuleInit();
  };
  const w1 = () => registry.worker('w1')!;
  const blocks = (i: number) =>
    (
      published[i].payload as { workers: Array<{ ranks: Array<{ decode_blocks: number }> }> }
    ).workers[0].ranks.map((r) => r.decode_blocks);

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  // Microtasks run as they do in the process: the first change of a quiet interval goes out in one.
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['queueMicrotask'] }));
  afterEach(() => {
    sut.onModuleDestroy();
    jest.useRealTimers();
  });

  it('sends a burst of requests as one message, at most one per interval, and their end as a worker with no ranks', async () => {
    build(5);
    const held = [1, 2, 3].map(() => registry.reserve(w1(), 7, 153, Date.now()));
    expect(published).toEqual([]);
    // The first change after a quiet interval: as soon as the code that made it returns, before
    // any timer (the replica may be busy with I/O for milliseconds before its timers run).
    await Promise.resolve();
    expect(published).toHaveLength(1);
    expect(published[0].subject).toBe('namespace.ns.reservations');
    expect(blocks(0)).toEqual([30]);
    for (const h of held) h.release();
    jest.advanceTimersByTime(4); // within the interval of the last message: held back
    expect(published).toHaveLength(1);
    jest.advanceTimersByTime(1);
    expect(published).toHaveLength(2);
    expect(blocks(1)).toEqual([]);
    jest.advanceTimersByTime(5000); // nothing held: nothing repeated
    expect(published).toHaveLength(2);
  });

  it('repeats what it holds each quarter of the TTL, and withdraws it when it stops', async () => {
    build(5);
    registry.reserve(w1(), 7, 153, Date.now());
    await Promise.resolve();
    jest.advanceTimersByTime(500);
    expect(published.map((_, i) => blocks(i))).toEqual([[10], [10]]);
    sut.onModuleDestroy();
    expect(blocks(2)).toEqual([]);
  });

  it('sends nothing with the interval at 0', () => {
    build(0);
    registry.reserve(w1(), 7, 153, Date.now());
    jest.advanceTimersByTime(5000);
    expect(published).toEqual([]);
  });
});
