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
  private readonly chunks: Buffer[] = [];

  constructor(
    private readonly resolve: (answer: WholeAnswer) => void,
    private readonly reject: (err: Error) => void,
  ) {}

  abort(): void {
    if (this.aborted || this.finished) return;
    this.aborted = true;
    this.abortFn?.(new undiciErrors.RequestAbortedError());
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
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return true;
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
