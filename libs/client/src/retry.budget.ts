/** Settings of a `RetryBudget`. */
export interface RetryBudgetOptions {
  /** Tokens the bucket holds at most, and starts with (default 10). */
  readonly maxTokens?: number;
  /** Tokens each successful request deposits (default 0.1: one retry per ten successes). */
  readonly depositPerSuccess?: number;
}

/**
 * A token bucket that limits retries to a fraction of successful traffic, as gRPC's retry
 * throttling and Finagle's RetryBudget do. Each retry withdraws one token, each success
 * deposits `depositPerSuccess`. While the backend keeps shedding, successes stop, the bucket
 * drains and the client sends each request once — retries cannot multiply the load on an
 * overloaded fleet. Shared by every request of a client; pass one instance to several clients
 * to share it wider.
 */
export class RetryBudget {
  readonly maxTokens: number;
  readonly depositPerSuccess: number;
  // Kept in thousandths of a token: ten deposits of 0.1 must make exactly one token.
  private milli: number;

  constructor(options: RetryBudgetOptions = {}) {
    this.maxTokens = options.maxTokens ?? 10;
    this.depositPerSuccess = options.depositPerSuccess ?? 0.1;
    if (!(this.maxTokens >= 0) || !(this.depositPerSuccess >= 0)) {
      throw new RangeError('RetryBudget: maxTokens and depositPerSuccess must be >= 0');
    }
    this.milli = Math.round(this.maxTokens * 1000);
  }

  /** Tokens left; a retry needs a whole one. */
  get available(): number {
    return this.milli / 1000;
  }

  /** Takes one token for a retry; false (and nothing taken) when less than one is left. */
  tryWithdraw(): boolean {
    if (this.milli < 1000) return false;
    this.milli -= 1000;
    return true;
  }

  deposit(): void {
    const max = Math.round(this.maxTokens * 1000);
    this.milli = Math.min(max, this.milli + Math.round(this.depositPerSuccess * 1000));
  }
}
