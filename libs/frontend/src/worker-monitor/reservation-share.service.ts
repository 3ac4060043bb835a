import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { EventPublisher } from '@sluice/bus';
import {
  RESERVATIONS_EVENT,
  reservationShareWire,
  SHARE_LIMITS,
  SharedRankReservations,
  SharedWorkerReservations,
  subjectFor,
} from '@sluice/contracts';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { METRIC } from '../metrics/metric-names';
import { MonitorTransport } from '../transport/monitor-transport';
import { PeerReservationsService } from './peer-reservations.service';
import { WorkerRegistry } from './worker-registry.service';

/**
 * Publishes this replica's reservations between reports to the other replicas
 * (docs/decisions/0182-replicas-share-reservations.md): the workers whose totals changed, at most
 * once per `--reservation-share-interval-ms` (a request costs a set insertion, never a round
 * trip), and every worker it holds reservations on each quarter of `--reservation-share-ttl-ms`,
 * so that the others keep counting them while this replica lives. Only on NATS: the embedded
 * bus serves one process.
 */
@Injectable()
export class ReservationShareService implements OnModuleInit, OnModuleDestroy {
  private readonly dirty = new Set<string>();
  /** What the others were last told, per worker with reservations. */
  private readonly sent = new Map<string, SharedRankReservations[]>();
  private flushTimer: NodeJS.Timeout | undefined;
  /** A flush is due: in a microtask (leading edge) or on `flushTimer`. */
  private flushPending = false;
  private repeatTimer: NodeJS.Timeout | undefined;
  private lastFlushMs = -Infinity;
  private readonly subject: string;

  constructor(
    private readonly config: FrontendConfig,
    private readonly registry: WorkerRegistry,
    private readonly transport: MonitorTransport,
    private readonly publisher: EventPublisher,
    private readonly peers: PeerReservationsService,
    @InjectMetric(METRIC.reservationShares) private readonly messages: Counter,
  ) {
    this.subject = subjectFor(config.namespace, RESERVATIONS_EVENT);
    for (const outcome of ['sent', 'received', 'invalid']) messages.inc({ outcome }, 0);
  }

  get enabled(): boolean {
    return this.config.reservationShareIntervalMs > 0 && this.transport.nats !== null;
  }

  onModuleInit(): void {
    if (!this.enabled) return;
    const changed = (worker: { id: string }): void => this.changed(worker.id);
    this.registry.observe({ reservationsChanged: changed, workerRemoved: changed });
    this.repeatTimer = setInterval(() => this.repeat(), this.config.reservationShareTtlMs / 4);
    this.repeatTimer.unref();
  }

  /** Tells the others this replica holds nothing any more (best effort: a kill relies on the TTL). */
  onModuleDestroy(): void {
    this.flushPending = false;
    clearTimeout(this.flushTimer);
    clearInterval(this.repeatTimer);
    const gone = [...this.sent.keys()].map((workerId) => ({ workerId, ranks: [] }));
    this.sent.clear();
    this.send(gone);
  }

  /**
   * Leading edge: the first change after a quiet interval goes out as soon as the code that made
   * it returns (a microtask: before this replica reads another socket or proxies the request, so
   * the other replicas hear of it about a millisecond later); later ones wait for the interval
   * since the last message, and go out together.
   */
  private changed(workerId: string): void {
    this.dirty.add(workerId);
    if (this.flushPending) return;
    this.flushPending = true;
    const wait = this.lastFlushMs + this.config.reservationShareIntervalMs - Date.now();
    if (wait <= 0) {
      queueMicrotask(() => this.flush());
      return;
    }
    this.flushTimer = setTimeout(() => this.flush(), wait);
    this.flushTimer.unref();
  }

  private flush(): void {
    if (!this.flushPending) return;
    this.flushPending = false;
    this.flushTimer = undefined;
    this.lastFlushMs = Date.now();
    const workers: SharedWorkerReservations[] = [];
    for (const workerId of this.dirty) {
      const ranks = this.ranksOf(workerId);
      const last = this.sent.get(workerId);
      if (sameRanks(last, ranks)) continue;
      if (ranks.length) this.sent.set(workerId, ranks);
      else this.sent.delete(workerId);
      workers.push({ workerId, ranks });
    }
    this.dirty.clear();
    this.send(workers);
  }

  /** Every worker this replica holds reservations on again, so the others keep them. */
  private repeat(): void {
    this.send([...this.sent].map(([workerId, ranks]) => ({ workerId, ranks })));
    this.peers.expire(Date.now());
  }

  /** This replica's own reservations on each rank of the worker; none: nothing of ours counts. */
  private ranksOf(workerId: string): SharedRankReservations[] {
    const worker = this.registry.worker(workerId);
    const ranks: SharedRankReservations[] = [];
    for (const [dpRank, { reserved: r }] of worker?.ranks ?? []) {
      const decodeBlocks = count(r.decodeBlocks);
      const prefillTokens = count(r.prefillTokens);
      const waiting = count(r.waiting);
      if (decodeBlocks || prefillTokens || waiting) {
        ranks.push({ dpRank, decodeBlocks, prefillTokens, waiting });
      }
    }
    return ranks;
  }

  private send(workers: SharedWorkerReservations[]): void {
    for (let i = 0; i < workers.length; i += SHARE_LIMITS.maxWorkers) {
      const chunk = workers.slice(i, i + SHARE_LIMITS.maxWorkers);
      const wire = reservationShareWire({ origin: this.peers.origin, workers: chunk });
      this.publisher.publish(this.subject, wire);
      this.messages.inc({ outcome: 'sent' });
    }
  }
}

const count = (v: number): number => (v > 0 ? Math.round(v) : 0);

function sameRanks(
  a: readonly SharedRankReservations[] | undefined,
  b: readonly SharedRankReservations[],
): boolean {
  if (!a) return b.length === 0;
  if (a.length !== b.length) return false;
  return a.every(
    (x, i) =>
      x.dpRank === b[i].dpRank &&
      x.decodeBlocks === b[i].decodeBlocks &&
      x.prefillTokens === b[i].prefillTokens &&
      x.waiting === b[i].waiting,
  );
}
