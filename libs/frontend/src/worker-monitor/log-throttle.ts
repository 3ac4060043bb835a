/**
 * Rate-limits log lines per key: a key may write `burst` lines at once, then one per
 * `intervalMs`. A line left out is remembered (the newest one per key) and written by `flush`
 * once the key may write again, saying how many were left out — so the log still ends with the
 * current state, e.g. of a worker that hovers at a threshold and flips on every report.
 */
export class LogThrottle {
  private readonly keys = new Map<string, KeyState>();

  constructor(
    private readonly write: (line: string) => void,
    private readonly intervalMs: number,
    private readonly burst = 1,
    private readonly what = 'lines',
  ) {}

  line(key: string, text: string, nowMs: number): void {
    let state = this.keys.get(key);
    if (!state) {
      state = { tokens: this.burst, refilledMs: nowMs, suppressed: 0, pending: undefined };
      this.keys.set(key, state);
    }
    this.refill(state, nowMs);
    if (state.tokens >= 1) {
      state.tokens--;
      this.emit(state, text);
    } else {
      state.suppressed++;
      state.pending = text;
    }
  }

  /** Writes the newest left-out line of every key that may write again. */
  flush(nowMs: number): void {
    for (const [key, state] of this.keys) {
      this.refill(state, nowMs);
      if (state.pending !== undefined && state.tokens >= 1) {
        state.tokens--;
        state.suppressed--; // the pending line itself is written
        this.emit(state, state.pending);
      }
      if (state.pending === undefined && state.tokens >= this.burst) this.keys.delete(key);
    }
  }

  /** Forgets a key (its subject is gone); a left-out line of it is dropped with it. */
  forget(key: string): void {
    this.keys.delete(key);
  }

  get size(): number {
    return this.keys.size;
  }

  private refill(state: KeyState, nowMs: number): void {
    const earned = Math.floor((nowMs - state.refilledMs) / this.intervalMs);
    if (earned <= 0) return;
    state.tokens = Math.min(this.burst, state.tokens + earned);
    // Whole intervals only, so that a key never writes twice within one interval.
    state.refilledMs =
      state.tokens === this.burst ? nowMs : state.refilledMs + earned * this.intervalMs;
  }

  private emit(state: KeyState, text: string): void {
    const n = state.suppressed;
    this.write(n > 0 ? `${text} (${n} more ${n === 1 ? this.one() : this.what} suppressed)` : text);
    state.suppressed = 0;
    state.pending = undefined;
  }

  private one(): string {
    return this.what.endsWith('s') ? this.what.slice(0, -1) : this.what;
  }
}

interface KeyState {
  tokens: number;
  refilledMs: number;
  suppressed: number;
  pending: string | undefined;
}
