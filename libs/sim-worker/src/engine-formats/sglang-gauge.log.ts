import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { SimRankLoad, StepPlan } from '../engine/rank-scheduler';
import { SimEngine } from '../engine/sim-engine';

/** SGLang's `--decode-log-interval` default: decode batches between two writes of the gauges. */
export const SGLANG_DECODE_LOG_INTERVAL = 40;
/** While a scheduler is idle, it writes its gauges again once this long has passed since the last write. */
export const SGLANG_IDLE_LOG_MS = 30_000;

interface Written {
  readonly load: SimRankLoad;
  readonly atMs: number;
}

/**
 * The scheduler gauges of SGLang's `/metrics` as SGLang writes them: at each prefill step, every
 * 40th decode step, and while the rank is idle only once 30 s have passed since the last write
 * (its start-up warm-up request writes the first). In between, `/metrics` shows the last written
 * values however the rank has changed: after a burst, the busy state for up to 30 s.
 */
@Injectable()
export class SglangGaugeLog implements OnModuleDestroy {
  private readonly written: Written[];
  private readonly decodeSteps: number[];
  private readonly unsubscribe: () => void;

  constructor(private readonly engine: SimEngine) {
    const now = Date.now();
    this.written = Array.from({ length: engine.dpSize }, (_, rank) => ({
      load: engine.load(rank),
      atMs: now,
    }));
    this.decodeSteps = this.written.map(() => 0);
    this.unsubscribe = engine.onStep((rank, plan) => this.stepped(rank, plan));
  }

  /** The gauges as `/metrics` shows them at `nowMs`, by rank. */
  read(nowMs = Date.now()): SimRankLoad[] {
    return this.written.map((w, rank) => {
      const idleRefresh = this.engine.isIdle(rank) && nowMs - w.atMs >= SGLANG_IDLE_LOG_MS;
      return idleRefresh ? this.write(rank, nowMs) : w.load;
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe();
  }

  private stepped(rank: number, plan: StepPlan): void {
    if (plan.prefillTokens > 0) {
      this.write(rank, Date.now());
    } else if (plan.decoding.length > 0) {
      this.decodeSteps[rank]++;
      if (this.decodeSteps[rank] % SGLANG_DECODE_LOG_INTERVAL === 0) this.write(rank, Date.now());
    }
  }

  private write(rank: number, atMs: number): SimRankLoad {
    const load = this.engine.load(rank);
    this.written[rank] = { load, atMs };
    return load;
  }
}
