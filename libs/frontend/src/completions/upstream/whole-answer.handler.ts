import { Dispatcher, errors as undiciErrors } from 'undici';

/** A worker's unary answer, read whole. */
export interface WholeAnswer {
  readonly statusCode: number;
  readonly contentType: string | undefined;
  readonly body: Buffer;
}

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

/**
 * Collects a unary answer for undici's dispatch API. It implements undici's plain handler
 * methods (onConnect, onHeaders, …), which undici calls directly; a handler with the newer
 * controller methods would be wrapped in an adapter per request.
 */
export class WholeAnswerHandler implements Dispatcher.DispatchHandler {
  private abortFn: ((err?: Error) => void) | null = null;
  private aborted = false;
  private finished = false;
  private statusCode = 0;
  private contentType: string | undefined;
  private chunks: Buffer[] = [];
  private bytes = 0;

  constructor(
    private readonly resolve: (answer: WholeAnswer) => void,
    private readonly reject: (err: Error) => void,
    /** Bytes read at most; beyond, the request is aborted and fails with AnswerTooLargeError. */
    private readonly maxBytes = Infinity,
  ) {}

  abort(err: Error = new undiciErrors.RequestAbortedError()): void {
    if (this.aborted || this.finished) return;
    this.aborted = true;
    this.abortFn?.(err);
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.aborted) abort(new undiciErrors.RequestAbortedError());
    else this.abortFn = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.statusCode = statusCode;
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = rawHeaders[i];
      if (name.length === 12 && name.toString('latin1').toLowerCase() === 'content-type') {
        this.contentType = rawHeaders[i + 1].toString('latin1');
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
    return true;
  }

  /** Drops what was read and aborts the request: nothing is kept beyond the cap. */
  private tooLarge(): void {
    this.chunks = [];
    this.abort(new AnswerTooLargeError(this.maxBytes));
  }

  onComplete(): void {
    this.finished = true;
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.resolve({ statusCode: this.statusCode, contentType: this.contentType, body });
  }

  onError(err: Error): void {
    this.finished = true;
    this.reject(this.statusCode === 0 ? err : new MidAnswerError(err, this.statusCode));
  }
}
