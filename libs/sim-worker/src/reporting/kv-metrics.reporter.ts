import { Injectable, Logger } from '@nestjs/common';
import { EventPublisher } from '@sluice/bus';
import {
  KV_METRICS_EVENT,
  KvMetricsWire,
  subjectFor,
  WORKER_DOWN_EVENT,
  WorkerDownWire,
} from '@sluice/contracts';
import { WorkerConfig } from '../config/worker-config';
import { SimEngine } from '../engine/sim-engine';

/** A burst of load changes (one per step per rank) collapses into one report per rank. */
export const REPORT_DEBOUNCE_MS = 10;

/** Publishes each rank's load (docs/api.md#nats-subjects) periodically and shortly after every change. */
@Injectable()
export class KvMetricsReporter {
  private readonly logger = new Logger(KvMetricsReporter.name);
  private readonly dirty = new Set<number>();
  /** Next `seq` per rank: consumers drop a report older than one they have already seen. */
  private readonly nextSeq: number[];
  private flushTimer: NodeJS.Timeout | null = null;
  private intervalTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private endpoint: string | null = null;
  private publishFailed = false;

  constructor(
    private readonly engine: SimEngine,
    private readonly publisher: EventPublisher,
    private readonly config: WorkerConfig,
  ) {
    this.nextSeq = Array.from({ length: engine.dpSize }, () => 0);
  }

  /** `endpoint` is only known once the server listens, hence a start step after construction. */
  start(endpoint: string): void {
    if (this.endpoint !== null) return;
    this.endpoint = endpoint;
    this.unsubscribe = this.engine.onChange((rank) => this.markDirty(rank));
    this.intervalTimer = setInterval(() => this.publishAll(), this.config.options.reportIntervalMs);
    this.publishAll();
  }

  /** Stops reporting and, if the worker was ever announced, tells consumers it is gone. */
  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.intervalTimer) clearInterval(this.intervalTimer);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.intervalTimer = this.flushTimer = null;
    this.dirty.clear();
    if (this.endpoint === null) return;
    this.endpoint = null;
    const down: WorkerDownWire = { worker_id: this.config.options.workerId };
    this.send(subjectFor(this.config.options.namespace, WORKER_DOWN_EVENT), down);
  }

  private markDirty(rank: number): void {
    this.dirty.add(rank);
    this.flushTimer ??= setTimeout(() => this.flush(), REPORT_DEBOUNCE_MS);
  }

  private flush(): void {
    this.flushTimer = null;
    const ranks = [...this.dirty];
    this.dirty.clear();
    for (const rank of ranks) this.publishRank(rank);
  }

  private publishAll(): void {
    for (let rank = 0; rank < this.engine.dpSize; rank += 1) this.publishRank(rank);
  }

  private publishRank(rank: number): void {
    if (this.endpoint === null) return;
    const { options } = this.config;
    const load = this.engine.load(rank);
    const report: KvMetricsWire = {
      worker_id: options.workerId,
      model: options.model,
      endpoint: this.endpoint,
      dp_rank: rank,
      dp_size: options.dpSize,
      active_decode_blocks: load.activeDecodeBlocks,
      kv_total_blocks: options.kvTotalBlocks,
      active_prefill_tokens: load.activePrefillTokens,
      num_requests_waiting: load.waitingRequests,
      max_num_batched_tokens: options.maxNumBatchedTokens,
      timestamp_ms: Date.now(),
      seq: this.nextSeq[rank]++,
    };
    this.send(subjectFor(options.namespace, KV_METRICS_EVENT), report);
  }

  /** Runs inside timers: a failing bus must be logged, never crash the worker. */
  private send(subject: string, payload: object): void {
    try {
      this.publisher.publish(subject, payload);
      this.publishFailed = false;
    } catch (err) {
      // Log the first failure of a streak only; reports go out every 10 ms under load.
      if (!this.publishFailed) this.logger.warn(`publishing ${subject} failed: ${String(err)}`);
      this.publishFailed = true;
    }
  }
}
