import { Dispatcher, errors as undiciErrors } from 'undici';

/** A worker's unary answer, read whole. */
export interface WholeAnswer {
  readonly statusCode: number;
  readonly contentType: string | undefined;
  readonly body: Buffer;
  /** The worker's `Location` and `Retry-After`, which the client needs (PASSED_HEADERS). */
  readonly passed?: PassedHeaders;
}

/** Headers of a worker's answer that reach the client: where a 3xx points, when to retry a 429. */
export const PASSED_HEADERS = ['location', 'retry-after'] as const;
export type PassedHeaders = Partial<Record<(typeof PASSED_HEADERS)[number], string>>;

/** The worker failed after its status line: part of an answer was read, so it is not retried. */
export class MidAnswerError extends Error {
  constructor(
    override readonly cause: Error,
    readonly statusCode: number,
  ) {
    super(cause.message);
    this.name = 'MidAnswerError';
  }
}

/** A worker's answer (or error body) longer than `--max-upstream-body-bytes`. */
export class AnswerTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`Worker answer exceeds ${maxBytes} bytes (--max-upstream-body-bytes)`);
    this.name = 'AnswerTooLargeError';
  }
}

/** A timer's callback with the handler as its argument: no closure per request. */
function expire(handler: WholeAnswerHandler): void {
  handler.timedOut();
}

/**
 * Collects a unary answer for undici's dispatch API. It implements undici's plain handler
 * methods (onConnect, onHeaders, …), which undici calls directly; a handler with the newer
 * controller methods would be wrapped in an adapter per request.
 *
 * It also keeps the request's timeouts (`timeoutMs`), as undici's `headersTimeout` and
 * `bodyTimeout` would: from the start on a connection to the status line, then between body
 * chunks, failing with undici's own HeadersTimeoutError or BodyTimeoutError. It keeps them on
 * one of Node's timers, which is unlinked and dropped as soon as the answer is read. undici's
 * own coarse timers stay listed until its next tick, up to a second later, so under load every
 * request's state would outlive young-generation collections and be promoted to the old
 * generation, to be freed only by full collections.
 */
export class WholeAnswerHandler implements Dispatcher.DispatchHandler {
  private abortFn: ((err?: Error) => void) | null = null;
  private aborted = false;
  private finished = false;
  private statusCode = 0;
  private contentType: string | undefined;
  private passed: PassedHeaders | undefined;
  private chunks: Buffer[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly resolve: (answer: WholeAnswer) => void,
    private readonly reject: (err: Error) => void,
    /** Bytes read at most; beyond, the request is aborted and fails with AnswerTooLargeError. */
    private readonly maxBytes = Infinity,
    /** Longest wait for the status line, then between body chunks; 0: none. */
    private readonly timeoutMs = 0,
  ) {}

  abort(err: Error = new undiciErrors.RequestAbortedError()): void {
    if (this.aborted || this.finished) return;
    this.aborted = true;
    this.stopTimer();
    this.abortFn?.(err);
  }

  /** The timer ran out: before the status line, or between body chunks. */
  timedOut(): void {
    this.timer = null;
    this.abort(
      this.statusCode === 0
        ? new undiciErrors.HeadersTimeoutError()
        : new undiciErrors.BodyTimeoutError(),
    );
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.aborted) return abort(new undiciErrors.RequestAbortedError());
    this.abortFn = abort;
    if (this.timeoutMs > 0 && this.timer === null) {
      this.timer = setTimeout(expire, this.timeoutMs, this).unref();
    }
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.statusCode = statusCode;
    this.timer?.refresh();
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = rawHeaders[i];
      if (name.length === 12 && name.toString('latin1').toLowerCase() === 'content-type') {
        this.contentType = rawHeaders[i + 1].toString('latin1');
      } else if (name.length === 8 || name.length === 11) {
        const lower = name.toString('latin1').toLowerCase();
        if (lower === 'location' || lower === 'retry-after') {
          (this.passed ??= {})[lower] = rawHeaders[i + 1].toString('latin1');
        }
      } else if (
        name.length === 14 &&
        name.toString('latin1').toLowerCase() === 'content-length' &&
        Number(rawHeaders[i + 1].toString('latin1')) > this.maxBytes
      ) {
        // Declared too large: refuse before reading any of it.
        this.tooLarge();
        return false;
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.aborted) return false;
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      this.tooLarge();
      return false;
    }
    this.chunks.push(chunk);
    this.timer?.refresh();
    return true;
  }

  private stopTimer(): void {
    if (this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
  }

  /** Drops what was read and aborts the request: nothing is kept beyond the cap. */
  private tooLarge(): void {
    this.chunks = [];
    this.abort(new AnswerTooLargeError(this.maxBytes));
  }

  onComplete(): void {
    this.finished = true;
    this.stopTimer();
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const { statusCode, contentType, passed } = this;
    this.resolve({ statusCode, contentType, body, passed });
  }

  onError(err: Error): void {
    this.finished = true;
    this.stopTimer();
    this.reject(this.statusCode === 0 ? err : new MidAnswerError(err, this.statusCode));
  }
}
