import { Injectable } from '@nestjs/common';
import { parseReservationShare } from '@sluice/contracts';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { randomUUID } from 'node:crypto';
import { Counter, Gauge } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { METRIC } from '../metrics/metric-names';
import { PeerReservations } from './reservations';
import { WorkerRegistry } from './worker-registry.service';

/** Replicas whose reservations are kept at most: anyone on NATS can claim to be one. */
export const MAX_PEERS = 256;

/**
 * The other replicas' reservations, from their `reservations` messages
 * (docs/decisions/0182-replicas-share-reservations.md): handed to the registry, which judges each
 * rank on its report plus every replica's reservations. A replica's reservations on a worker
 * count until `--reservation-share-ttl-ms` after its last message naming that worker: a replica
 * that stops publishing (killed, cut off) has them expire.
 */
@Injectable()
export class PeerReservationsService {
  /** This replica, as its own messages name it (they come back to it on NATS). */
  readonly origin = randomUUID();
  /** Per replica, per worker it holds reservations on: when it last said so. */
  private readonly peers = new Map<string, Map<string, number>>();

  constructor(
    private readonly config: FrontendConfig,
    private readonly registry: WorkerRegistry,
    @InjectMetric(METRIC.reservationShares) private readonly messages: Counter,
    @InjectMetric(METRIC.reservationSharePeers) private readonly peerCount: Gauge,
  ) {
    peerCount.set(0);
  }

  onMessage(payload: unknown, nowMs = Date.now()): void {
    if (this.config.reservationShareIntervalMs === 0) return;
    const parsed = parseReservationShare(payload);
    if (!parsed.ok) return void this.messages.inc({ outcome: 'invalid' });
    const { origin, workers } = parsed.value;
    if (origin === this.origin) return;
    let seen = this.peers.get(origin);
    if (!seen) {
      if (this.peers.size >= MAX_PEERS) return void this.messages.inc({ outcome: 'invalid' });
      seen = new Map();
      this.peers.set(origin, seen);
      this.peerCount.set(this.peers.size);
    }
    for (const { workerId, ranks } of workers) {
      if (ranks.length === 0) {
        seen.delete(workerId);
        this.registry.sharePeerReservations(workerId, origin, undefined);
        continue;
      }
      const byRank = new Map<number, PeerReservations>();
      for (const r of ranks) byRank.set(r.dpRank, r);
      if (this.registry.sharePeerReservations(workerId, origin, byRank)) seen.set(workerId, nowMs);
    }
    this.messages.inc({ outcome: 'received' });
  }

  /** Forgets reservations their replica has not repeated for the TTL. */
  expire(nowMs: number): void {
    const deadline = nowMs - this.config.reservationShareTtlMs;
    for (const [origin, seen] of this.peers) {
      for (const [workerId, atMs] of seen) {
        if (atMs >= deadline) continue;
        seen.delete(workerId);
        this.registry.sharePeerReservations(workerId, origin, undefined);
      }
      if (seen.size === 0) this.peers.delete(origin);
    }
    this.peerCount.set(this.peers.size);
  }
}
