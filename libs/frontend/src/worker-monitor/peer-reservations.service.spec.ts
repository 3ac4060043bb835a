import { Logger } from '@nestjs/common';
import { parsedReport } from '@sluice/testkit';
import { Counter, Gauge } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { PeerReservationsService } from './peer-reservations.service';
import { WorkerRegistry } from './worker-registry.service';

describe('PeerReservationsService', () => {
  let registry: WorkerRegistry;
  let messages: Counter;
  let peers: Gauge;
  let sut: PeerReservationsService;

  const share = (origin: string, decodeBlocks: number | null, workerId = 'w1') => ({
    origin,
    workers: [
      {
        worker_id: workerId,
        ranks:
          decodeBlocks === null
            ? []
            : [{ dp_rank: 0, decode_blocks: decodeBlocks, prefill_tokens: 0, waiting: 0 }],
      },
    ],
  });
  const shared = () => registry.worker('w1')?.ranks.get(0)?.peers.decodeBlocks;
  const count = async (outcome: string) =>
    (await messages.get()).values.find((v) => v.labels.outcome === outcome)?.value;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    const config = new FrontendConfig({ reservationShareTtlMs: 2000 });
    registry = new WorkerRegistry(config, new ThresholdsService(config));
    registry.applyReport(parsedReport('w1', { activeDecodeBlocks: 0 }), 0);
    messages = new Counter({ name: 'm', help: 'm', labelNames: ['outcome'], registers: [] });
    peers = new Gauge({ name: 'p', help: 'p', registers: [] });
    sut = new PeerReservationsService(config, registry, messages, peers);
  });

  it("sums the replicas' newest totals, and forgets a replica's after the TTL without a message naming the worker", async () => {
    sut.onMessage(share('a', 30), 1000);
    sut.onMessage(share('b', 20), 1000);
    sut.onMessage(share('a', 40), 1500);
    expect(shared()).toBe(60);
    expect((await peers.get()).values[0].value).toBe(2);
    sut.expire(3001); // b's message was 2001 ms ago, a's 1501
    expect(shared()).toBe(40);
    sut.expire(3501);
    expect(shared()).toBe(0);
    expect((await peers.get()).values[0].value).toBe(0);
    expect(await count('received')).toBe(3);
  });

  it('drops a worker a replica withdraws at once', () => {
    sut.onMessage(share('a', 30), 1000);
    sut.onMessage(share('a', null), 1001);
    expect(shared()).toBe(0);
  });

  it('ignores its own messages, and counts a malformed one as invalid, changing nothing', async () => {
    sut.onMessage(share(sut.origin, 30), 1000);
    sut.onMessage({ origin: 'a', workers: [{ worker_id: 'w1', ranks: [{ dp_rank: 0 }] }] }, 1000);
    expect(shared()).toBe(0);
    expect(await count('invalid')).toBe(1);
  });

  it('ignores workers it does not know, without keeping them', () => {
    sut.onMessage(share('a', 30, 'unknown'), 1000);
    registry.applyReport(parsedReport('unknown', { activeDecodeBlocks: 0 }), 1001);
    expect(registry.worker('unknown')?.ranks.get(0)?.peers.decodeBlocks).toBe(0);
  });
});
