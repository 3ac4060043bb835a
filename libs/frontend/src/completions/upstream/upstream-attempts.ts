import { errors as undiciErrors } from 'undici';
import { FrontendConfig } from '../../config/frontend-config';
import { PriorityClass } from '../../config/priority';
import { RetryReason } from '../../metrics/metric-names';
import { RequestMetricsService } from '../../request-metrics/request-metrics.service';
import { RequestTenant } from '../../tenants/request-tenant';
import { WorkerEntry } from '../../worker-monitor/worker-entry';
import { Cancellation } from '../cancellation';
import { UpstreamError, UpstreamTimeoutError } from '../errors/upstream.error';
import { Lease, RouterService } from '../routing/router.service';
import { UpstreamFailuresLogger } from './upstream-failures.logger';
import { MidAnswerError } from './whole-answer.handler';

/** What the attempts of one request read and change: the worker it holds moves on a retry. */
export interface AttemptedRequest {
  readonly model: string;
  readonly promptTokens: number;
  readonly priority: PriorityClass;
  readonly maxTokens: number;
  /** Whom the request counts for in the model's fair share, on whichever worker holds it. */
  readonly tenant?: RequestTenant;
  readonly cancel: Cancellation;
  lease: Lease;
}

/** How one kind of call's result reads: its status line, and how to drop it for a retry. */
export interface AttemptResult<T> {
  readonly status: (result: T) => number;
  /** Frees what a 5xx answer holds (its unread body) when the request goes elsewhere. */
  readonly discard: (result: T) => void;
}

/** Told of every attempt's outcome as its worker's fault or not (outlier ejection). */
export interface AttemptObserver {
  succeeded(worker: WorkerEntry): void;
  failed(worker: WorkerEntry, reason: RetryReason): void;
}

const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Sends a request to its worker and, when the worker refuses the connection, cuts it or answers
 * 5xx before any byte went to the client, to other free workers it has not tried, at most
 * `--upstream-retries` of them; a request sent on a kept-alive connection the worker was closing
 * may go once more to the same worker (docs/decisions/0135-upstream-retries.md, which keeps
 * 0102). A failure after the status line (`MidAnswerError`), a timeout and a client that went
 * away are never retried.
 */
export class UpstreamAttempts {
  private readonly failures = new UpstreamFailuresLogger();

  constructor(
    private readonly config: FrontendConfig,
    private readonly router: RouterService,
    private readonly metrics: RequestMetricsService,
    private readonly observer: AttemptObserver | null = null,
  ) {}

  async send<T>(
    x: AttemptedRequest,
    call: (worker: WorkerEntry) => Promise<T>,
    read: AttemptResult<T>,
  ): Promise<T> {
    let tried: Set<WorkerEntry> | undefined;
    let retries = 0;
    let resent = false;
    for (;;) {
      const worker = x.lease.worker;
      let result: T;
      try {
        result = await call(worker);
      } catch (err) {
        if (err instanceof MidAnswerError || x.cancel.cancelled) throw err;
        const reason = failureReason(err);
        if (reason === null) throw this.logged(x, err, this.toUpstreamError(err, x));
        this.observer?.failed(worker, reason);
        if (this.moveOn(x, (tried ??= new Set()), retries, err)) {
          retries++;
        } else if (!resent && closedConnection(err)) {
          // 0102: the worker closed a kept-alive connection as the request went out on it.
          resent = true;
          this.logFailure(x, err, 'sent again on a new connection');
        } else {
          throw this.logged(x, err, this.toUpstreamError(err, x));
        }
        this.metrics.retried(x.model, reason);
        continue;
      }
      const status = read.status(result);
      if (x.cancel.cancelled) return result;
      if (status < 500) {
        this.observer?.succeeded(worker);
        return result;
      }
      this.observer?.failed(worker, 'status_5xx');
      // No other worker: the caller answers the 5xx as the contract's 502.
      if (!this.moveOn(x, (tried ??= new Set()), retries, `HTTP ${status}`)) return result;
      read.discard(result);
      retries++;
      this.metrics.retried(x.model, 'status_5xx');
    }
  }

  /**
   * Leases another untried free worker for the request when the retry budget allows, releasing
   * the failed one; false when there is none (the failure goes to the client, or 0102 applies).
   */
  private moveOn(
    x: AttemptedRequest,
    tried: Set<WorkerEntry>,
    retries: number,
    failure: unknown,
  ): boolean {
    tried.add(x.lease.worker);
    if (retries >= this.config.upstreamRetries) return false;
    const other = this.router.acquireOther(
      tried,
      x.promptTokens,
      x.priority,
      x.maxTokens,
      x.tenant,
    );
    if (!other) return false;
    this.logFailure(x, failure, `retried on worker ${other.worker.id}`);
    x.lease.release();
    x.lease = other;
    return true;
  }

  /** Logs a failure the client is told about (a client that went away is not the worker's fault). */
  logged(x: AttemptedRequest, err: unknown, failure: UpstreamError): UpstreamError {
    if (!x.cancel.cancelled) this.logFailure(x, err, `answered ${failure.status}`);
    return failure;
  }

  logFailure(x: AttemptedRequest, err: unknown, outcome: string): void {
    const reason = err instanceof Error ? err.message : String(err);
    this.failures.failed(x.lease.worker.id, x.lease.worker.endpoint, reason, outcome);
  }

  toUpstreamError(err: unknown, x: AttemptedRequest): UpstreamError {
    if (isTimeout(err)) return new UpstreamTimeoutError(this.config.upstreamTimeoutMs);
    const reason = err instanceof Error ? err.message : String(err);
    return new UpstreamError(`Worker ${x.lease.worker.id} failed: ${reason}`, true);
  }
}

/** The worker took longer than `--upstream-timeout-ms` for its headers or between chunks. */
function isTimeout(err: unknown): boolean {
  return (
    err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError
  );
}

/**
 * Why a call that failed before its status line may go elsewhere: the connection was refused
 * (`connect`) or failed otherwise (`reset`); null for a timeout (the worker may be working on
 * it) or an abort.
 */
export function failureReason(err: unknown): RetryReason | null {
  if (
    isTimeout(err) ||
    err instanceof undiciErrors.RequestAbortedError ||
    (err instanceof Error && err.name === 'AbortError')
  ) {
    return null;
  }
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CONNECT_CODES.has(code) ? 'connect' : 'reset';
}

/**
 * The worker closed the connection before any answer: a kept-alive connection it was closing as
 * the request went out on it. llama.cpp's server does so after many streamed answers
 * (docs/engines.md, "llama.cpp server"); the request never reached it, and a second attempt on a
 * new connection is served.
 */
function closedConnection(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET';
}
