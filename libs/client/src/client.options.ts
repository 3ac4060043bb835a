import type { Dispatcher } from 'undici';
import { abortableSleep } from './retry.sleep';
import { RetryBudget, RetryBudgetOptions } from './retry.budget';

/** How a `SluiceClient` retries. Every field is optional. */
export interface RetryOptions {
  /** Requests per call at most, the first included (default 4; 1 = never retry). */
  readonly maxAttempts?: number;
  /** Backoff ceiling of the first retry; doubles each retry (default 500 ms). */
  readonly baseDelayMs?: number;
  /** Cap of the backoff ceiling (default 8000 ms). A longer `Retry-After` still wins. */
  readonly maxDelayMs?: number;
  /**
   * A `Retry-After` longer than this is not waited for: the 503 goes to the caller at once
   * (default 30000 ms).
   */
  readonly maxRetryAfterMs?: number;
  /** Also retry when the connection is refused, i.e. nothing was sent (default false). */
  readonly retryConnectionRefused?: boolean;
  /** Also retry a 502 answer; it comes before any byte of a stream (default false). */
  readonly retryBadGateway?: boolean;
  /** The shared token bucket, or its settings; `false` turns the budget off. */
  readonly budget?: RetryBudget | RetryBudgetOptions | false;
}

export interface SluiceClientOptions {
  /** The frontend's root URL, e.g. `http://127.0.0.1:8000`; `/v1/...` is appended. */
  readonly baseUrl: string;
  /** Sent with every request (e.g. `authorization`). */
  readonly headers?: Record<string, string>;
  /** An undici dispatcher to send through (Agent, Pool, MockAgent); default: a Pool of its own. */
  readonly dispatcher?: Dispatcher;
  readonly retry?: RetryOptions;
  /** Wall clock in ms, for `Retry-After` dates (default `Date.now`). */
  readonly now?: () => number;
  /** Uniform in [0, 1), for jitter (default `Math.random`). */
  readonly random?: () => number;
  /** Waits `ms`; must reject with the signal's reason when it aborts (default: a timer). */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the request, and any wait between attempts. */
  readonly signal?: AbortSignal;
  /** Overrides `retry.maxAttempts` for this call. */
  readonly maxAttempts?: number;
}

export interface ResolvedRetry {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxRetryAfterMs: number;
  readonly retryConnectionRefused: boolean;
  readonly retryBadGateway: boolean;
  readonly budget: RetryBudget | undefined;
  readonly now: () => number;
  readonly random: () => number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export function resolveRetry(options: SluiceClientOptions): ResolvedRetry {
  const r = options.retry ?? {};
  const resolved: ResolvedRetry = {
    maxAttempts: r.maxAttempts ?? 4,
    baseDelayMs: r.baseDelayMs ?? 500,
    maxDelayMs: r.maxDelayMs ?? 8000,
    maxRetryAfterMs: r.maxRetryAfterMs ?? 30_000,
    retryConnectionRefused: r.retryConnectionRefused ?? false,
    retryBadGateway: r.retryBadGateway ?? false,
    budget:
      r.budget === false
        ? undefined
        : r.budget instanceof RetryBudget
          ? r.budget
          : new RetryBudget(r.budget),
    now: options.now ?? Date.now,
    random: options.random ?? Math.random,
    sleep: options.sleep ?? abortableSleep,
  };
  checkAttempts(resolved.maxAttempts);
  for (const key of ['baseDelayMs', 'maxDelayMs', 'maxRetryAfterMs'] as const) {
    if (!(resolved[key] >= 0)) {
      throw new RangeError(`retry.${key} must be >= 0, got ${resolved[key]}`);
    }
  }
  return resolved;
}

export function checkAttempts(n: number): number {
  if (!Number.isInteger(n) || n < 1) {
    throw new RangeError(`maxAttempts must be an integer >= 1, got ${n}`);
  }
  return n;
}
