import { Readable } from 'node:stream';
import { Dispatcher, errors as undiciErrors } from 'undici';

/** A worker's unary answer, read whole. */
export interface WholeAnswer {
  readonly statusCode: number;
  readonly contentType: string | undefined;
  readonly body: Buffer;
  /** The worker's `Location` and `Retry-After`, which the client needs (PASSED_HEADERS). */
  readonly passed?: PassedHeaders;
}

/**
 * A 2xx answer that declared a length above STREAM_MIN_BYTES and within
 * `--max-upstream-body-bytes`: relayed as it
 * arrives from its first byte on, never held whole (docs/decisions/0215). Its body fails with
 * MidAnswerError when the worker ends it short of its length.
 */
export interface StreamedAnswer extends Omit<WholeAnswer, 'body'> {
  readonly body: Readable;
  /** Its declared `content-length`. */
  readonly length: number;
}

export type UnaryAnswer = WholeAnswer | StreamedAnswer;

export function isStreamed(answer: UnaryAnswer): answer is StreamedAnswer {
  return answer.body instanceof Readable;
}

/** What a streamed answer's body holds before it stops reading from the worker. */
const STREAM_HIGH_WATER_MARK = 256 * 1024;
/**
 * A declared length up to this is read whole, as an answer of unknown length is: streaming it
 * would hold as much before pausing and costs a stream per request (the common answer is a few
 * KB, and streaming every one slowed the admitted path; decision 0215).
 */
export const STREAM_MIN_BYTES = STREAM_HIGH_WATER_MARK;

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
 * Collects a unary answer for undici's dispatch API; a 2xx answer whose declared length is
 * within the cap is handed on as a stream at its first byte instead (`StreamedAnswer`). It
 * implements undici's plain handler methods (onConnect, onHeaders, …), which undici calls
 * directly; a handler with the newer controller methods would be wrapped in an adapter per
 * request.
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
  /** The declared length of an answer to stream; null: read it whole. */
  private declared: number | null = null;
  private stream: Readable | null = null;
  private resumeFn: (() => void) | null = null;
  private paused = false;

  constructor(
    private readonly resolve: (answer: UnaryAnswer) => void,
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

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume?: () => void): boolean {
    this.statusCode = statusCode;
    this.resumeFn = resume ?? null;
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
      } else if (name.length === 14 && name.toString('latin1').toLowerCase() === 'content-length') {
        const length = Number(rawHeaders[i + 1].toString('latin1'));
        // Declared too large: refuse before reading any of it.
        if (length > this.maxBytes) return this.tooLarge();
        if (
          statusCode >= 200 &&
          statusCode < 300 &&
          Number.isSafeInteger(length) &&
          length > STREAM_MIN_BYTES
        ) {
          this.declared = length;
        }
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.aborted) return false;
    // undici reads no more than the declared length: it is within the cap.
    if (this.declared !== null) return this.relay(chunk, this.declared);
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
  private tooLarge(): false {
    this.chunks = [];
    this.abort(new AnswerTooLargeError(this.maxBytes));
    return false;
  }

  /**
   * A chunk of an answer to stream; the first hands the answer on. While its reader is behind,
   * the worker's connection is paused and the timer stopped: the wait is the client's, not the
   * worker's.
   */
  private relay(chunk: Buffer, length: number): boolean {
    if (this.stream === null) {
      this.stream = new Readable({
        highWaterMark: STREAM_HIGH_WATER_MARK,
        read: () => this.resumed(),
        destroy: (err, done) => {
          // Its reader went away (the client): stop the worker's answer.
          this.abort();
          done(err);
        },
      });
      const { statusCode, contentType, passed } = this;
      this.resolve({ statusCode, contentType, passed, body: this.stream, length });
    }
    if (this.stream.push(chunk)) {
      this.timer?.refresh();
      return true;
    }
    this.paused = true;
    this.stopTimer();
    return false;
  }

  private resumed(): void {
    if (!this.paused || this.finished) return;
    this.paused = false;
    if (this.timeoutMs > 0) this.timer = setTimeout(expire, this.timeoutMs, this).unref();
    this.resumeFn?.();
  }

  onComplete(): void {
    this.finished = true;
    this.stopTimer();
    if (this.stream !== null) {
      this.stream.push(null);
      return;
    }
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const { statusCode, contentType, passed } = this;
    this.resolve({ statusCode, contentType, body, passed });
  }

  onError(err: Error): void {
    this.finished = true;
    this.stopTimer();
    if (this.stream !== null) {
      this.stream.destroy(new MidAnswerError(err, this.statusCode));
      return;
    }
    this.reject(this.statusCode === 0 ? err : new MidAnswerError(err, this.statusCode));
  }
}
