import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Gauge } from 'prom-client';
import {
  RegistryObserver,
  RemovalReason,
  WorkerRegistry,
} from '../monitor/worker-registry.service';
import { RankState, WorkerEntry } from '../monitor/worker-entry';
import { METRIC } from './metric-names';

/** Mirrors the registry into the per-worker gauges; a forgotten worker's series disappear. */
@Injectable()
export class WorkerGaugesService implements OnModuleInit, RegistryObserver {
  constructor(
    private readonly registry: WorkerRegistry,
    @InjectMetric(METRIC.workerDecodeBlocks) private readonly decode: Gauge,
    @InjectMetric(METRIC.workerKvTotalBlocks) private readonly total: Gauge,
    @InjectMetric(METRIC.workerPrefillTokens) private readonly prefill: Gauge,
    @InjectMetric(METRIC.workerBusy) private readonly busy: Gauge,
  ) {}

  onModuleInit(): void {
    this.registry.observe(this);
  }

  rankUpdated(worker: WorkerEntry, rank: number, state: RankState): void {
    const labels = { model: worker.model, worker_id: worker.id, dp_rank: String(rank) };
    this.decode.set(labels, state.activeDecodeBlocks);
    this.total.set(labels, state.kvTotalBlocks);
    this.prefill.set(labels, state.activePrefillTokens);
    this.busyChanged(worker);
  }

  busyChanged(worker: WorkerEntry): void {
    this.busy.set({ model: worker.model, worker_id: worker.id }, worker.busy ? 1 : 0);
  }

  workerRemoved(worker: WorkerEntry, _reason: RemovalReason): void {
    for (let rank = 0; rank < worker.dpSize; rank++) {
      const labels = { model: worker.model, worker_id: worker.id, dp_rank: String(rank) };
      this.decode.remove(labels);
      this.total.remove(labels);
      this.prefill.remove(labels);
    }
    this.busy.remove({ model: worker.model, worker_id: worker.id });
  }
}
