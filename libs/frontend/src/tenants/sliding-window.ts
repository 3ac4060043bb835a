/** Seconds a per-minute limit looks back. */
export const WINDOW_SECS = 60;

/**
 * What was consumed in the last minute, in one-second buckets (a ring of 60): enough to say
 * whether one more request fits a per-minute limit and, if not, in how many seconds enough of the
 * oldest consumption will have left the window for it to fit.
 */
export class SlidingWindow {
  private readonly amounts = new Float64Array(WINDOW_SECS);
  private readonly seconds = new Float64Array(WINDOW_SECS).fill(-Infinity);

  /** Consumption in the minute ending at second `now`. */
  total(now: number): number {
    let sum = 0;
    for (let i = 0; i < WINDOW_SECS; i++) {
      if (now - this.seconds[i] < WINDOW_SECS) sum += this.amounts[i];
    }
    return sum;
  }

  /** Adds `amount` (negative: a correction) at second `at`, if still inside the window at `now`. */
  add(at: number, amount: number, now = at): void {
    if (now - at >= WINDOW_SECS) return;
    const i = at % WINDOW_SECS;
    if (this.seconds[i] !== at) {
      this.seconds[i] = at;
      this.amounts[i] = 0;
    }
    this.amounts[i] += amount;
  }

  /**
   * Seconds until `cost` more fits under `limit` (at least 1), as the oldest buckets leave the
   * window; `WINDOW_SECS` when it never fits in one minute (a cost above the limit).
   */
  retryAfter(now: number, cost: number, limit: number): number {
    const live: Array<[number, number]> = [];
    for (let i = 0; i < WINDOW_SECS; i++) {
      if (now - this.seconds[i] < WINDOW_SECS) live.push([this.seconds[i], this.amounts[i]]);
    }
    live.sort((a, b) => a[0] - b[0]);
    let total = live.reduce((s, [, a]) => s + a, 0);
    for (const [second, amount] of live) {
      total -= amount;
      if (total + cost <= limit) return Math.max(1, second + WINDOW_SECS - now);
    }
    return WINDOW_SECS;
  }

  /** Nothing consumed in the last minute: the window may be dropped. */
  idle(now: number): boolean {
    return this.total(now) <= 0;
  }
}
