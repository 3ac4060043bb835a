import { Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { ModelEntry } from '../worker-monitor/worker-entry';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { TrafficHistory } from './traffic-history';

/** Samples per bucket of the history: a bucket's load is the mean of about five. */
const SAMPLE_EVERY_MS = 1000;

export interface ModelLoad {
  /** Share (0..1) of the model's live workers that are busy. */
  readonly busyShare: number;
  /** Mean over reported ranks of active_decode_blocks / kv_total_blocks (each capped at 1). */
  readonly kvUsage: number | null;
}

/** The load of a model with live workers, or null without any. */
export function modelLoad(model: ModelEntry): ModelLoad | null {
  const workers = model.workers.size;
  if (workers === 0) return null;
  let usage = 0;
  let ranks = 0;
  for (const worker of model.workers.values()) {
    for (const rank of worker.ranks.values()) {
      if (rank.kvTotalBlocks <= 0) continue;
      usage += Math.min(1, rank.activeDecodeBlocks / rank.kvTotalBlocks);
      ranks++;
    }
  }
  return {
    busyShare: (workers - model.free.length) / workers,
    kvUsage: ranks > 0 ? usage / ranks : null,
  };
}

/**
 * Once a second, adds each model's busy share and KV usage to the traffic history, and drops
 * the histories gone idle. Off the request path: a scan of the registry's ranks per second.
 */
@Injectable()
export class LoadSampler implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly registry: WorkerRegistry,
    private readonly history: TrafficHistory,
  ) {}

  /** Not at module init: the rest of start-up can stall the event loop for seconds. */
  onApplicationBootstrap(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_EVERY_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  sample(): void {
    for (const name of this.registry.modelNames()) {
      const entry = this.registry.model(name);
      const load = entry && modelLoad(entry);
      if (load) this.history.sample(name, load.busyShare, load.kvUsage);
    }
    this.history.dropIdle();
  }
}
