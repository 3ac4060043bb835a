import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { METRIC } from '../metrics/metric-names';

/** Rates are taken over this many seconds: long enough to be steady, short enough to be live. */
export const REJECTION_WINDOW_SECONDS = 5;
const SAMPLE_EVERY_MS = 1000;

interface Sample {
  readonly atMs: number;
  /** Rejections so far per model, summed over endpoints. */
  readonly totals: ReadonlyMap<string, number>;
}

/**
 * Rejections per second per model, from once-a-second samples of the rejection counter kept in
 * a ring of `REJECTION_WINDOW_SECONDS + 1` entries. Reading the counter leaves the request path
 * untouched, and its label values are already bounded (known models × three endpoints).
 */
@Injectable()
export class RejectionRateService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('StatusPage');
  private readonly ring: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private failing = false;

  constructor(@InjectMetric(METRIC.rejections) private readonly counter: Counter) {}

  /** Not at module init: the rest of start-up can stall the event loop for seconds. */
  onApplicationBootstrap(): void {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), SAMPLE_EVERY_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Takes one sample; never throws (a failure is logged once until sampling works again). */
  async sample(nowMs = Date.now()): Promise<void> {
    try {
      const metric = await this.counter.get();
      const totals = new Map<string, number>();
      for (const { labels, value } of metric.values) {
        const model = String(labels.model ?? '');
        totals.set(model, (totals.get(model) ?? 0) + value);
      }
      this.ring.push({ atMs: nowMs, totals });
      if (this.ring.length > REJECTION_WINDOW_SECONDS + 1) this.ring.shift();
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.logger.warn(`cannot sample rejections: ${String(err)}`);
      this.failing = true;
    }
  }

  /**
   * Mean rate from the oldest sample inside the window to the newest. A sample older than the
   * window (left by a stalled event loop) is skipped unless nothing else is there; 0 until two
   * samples exist.
   */
  perSecond(model: string): number {
    const last = this.ring[this.ring.length - 1];
    if (!last || this.ring.length < 2) return 0;
    const oldest = last.atMs - (REJECTION_WINDOW_SECONDS * 1000 + SAMPLE_EVERY_MS / 2);
    const first =
      this.ring.find((s) => s.atMs >= oldest && s !== last) ?? this.ring[this.ring.length - 2];
    if (last.atMs <= first.atMs) return 0;
    const delta = (last.totals.get(model) ?? 0) - (first.totals.get(model) ?? 0);
    return Math.max(0, delta) / ((last.atMs - first.atMs) / 1000);
  }

  /** Rejections counted up to the latest sample. */
  total(model: string): number {
    return this.ring[this.ring.length - 1]?.totals.get(model) ?? 0;
  }
}
