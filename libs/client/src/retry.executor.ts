import { checkAttempts, ResolvedRetry } from './client.options';
import {
  parseErrorBody,
  SluiceConnectionError,
  SluiceHttpError,
  SluiceOverloadedError,
} from './client.errors';
import { HttpResponse, isConnectionRefused } from './http.transport';
import { parseRetryAfterMs, retryDelayMs } from './retry.policy';
import { abortReason } from './retry.sleep';

/** One attempt: sends the request with the call's signal. */
export type SendAttempt = (signal: AbortSignal | undefined) => Promise<HttpResponse>;

interface Failure {
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  readonly error: (budgetExhausted: boolean) => Error;
}

/** `'budget'`: a retry was due but the budget was empty. */
type Decision = number | 'budget' | 'stop';

/**
 * Runs the attempts of one call. Only an answer that says nothing was processed is retried —
 * a 503 (Sluice sheds before routing), and optionally a refused connection or a 502 — and only
 * before the response body is handed over, so a stream that has started is never replayed.
 */
export class RetryExecutor {
  constructor(private readonly r: ResolvedRetry) {}

  async run(
    send: SendAttempt,
    signal: AbortSignal | undefined,
    maxAttempts = this.r.maxAttempts,
  ): Promise<HttpResponse> {
    checkAttempts(maxAttempts);
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw abortReason(signal);
      const outcome = await this.attempt(send, signal, attempt);
      if (!('retryable' in outcome)) return outcome;
      const decision = this.decide(attempt, maxAttempts, outcome);
      if (typeof decision !== 'number') throw outcome.error(decision === 'budget');
      await this.r.sleep(decision, signal);
    }
  }

  private async attempt(
    send: SendAttempt,
    signal: AbortSignal | undefined,
    attempt: number,
  ): Promise<HttpResponse | Failure> {
    let res: HttpResponse;
    try {
      res = await send(signal);
    } catch (err) {
      if (signal?.aborted) throw abortReason(signal);
      return {
        retryable: this.r.retryConnectionRefused && isConnectionRefused(err),
        error: () => new SluiceConnectionError(attempt, err),
      };
    }
    const status = res.statusCode;
    if (status >= 200 && status < 300) {
      this.r.budget?.deposit();
      return res;
    }
    const text = await res.body.text().catch(() => '');
    if (signal?.aborted) throw abortReason(signal);
    const parsed = parseErrorBody(text);
    if (status === 503) {
      const retryAfterMs = parseRetryAfterMs(res.headers['retry-after'], this.r.now());
      const retryAfter = retryAfterMs === undefined ? undefined : retryAfterMs / 1000;
      return {
        retryable: true,
        retryAfterMs,
        error: (budgetExhausted) =>
          new SluiceOverloadedError(status, text, parsed, attempt, retryAfter, budgetExhausted),
      };
    }
    return {
      retryable: status === 502 && this.r.retryBadGateway,
      error: () => new SluiceHttpError(status, text, parsed, attempt),
    };
  }

  private decide(attempt: number, maxAttempts: number, failure: Failure): Decision {
    if (!failure.retryable || attempt >= maxAttempts) return 'stop';
    const retryAfterMs = failure.retryAfterMs;
    if (retryAfterMs !== undefined && retryAfterMs > this.r.maxRetryAfterMs) return 'stop';
    // Checked last: a token is spent only on a retry that will really be sent.
    if (this.r.budget && !this.r.budget.tryWithdraw()) return 'budget';
    return retryDelayMs(attempt - 1, retryAfterMs, this.r, this.r.random);
  }
}
