/** What a client that goes away stops: a queued wait, or the call to the worker. */
export class Cancellation {
  /** Its signal is made only when something listens (a queued wait, a streamed call). */
  readonly controller = new AbortController();
  /** Aborts the unary call in flight. */
  upstream: (() => void) | undefined;
  cancelled = false;

  cancel(): void {
    this.cancelled = true;
    this.upstream?.();
    this.controller.abort();
  }
}
