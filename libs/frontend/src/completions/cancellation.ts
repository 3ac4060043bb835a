/** What a client that goes away stops: a queued wait, or the call to the worker. */
export class Cancellation {
  /** Its signal is made only when something listens (a queued wait, a streamed call). */
  readonly controller = new AbortController();
  private upstream: (() => void) | undefined;
  cancelled = false;

  /**
   * Aborts the unary call in flight when the client goes away; at once if it went already
   * (a call set up after the abort would otherwise run to its end for nobody).
   */
  onCancel(abort: () => void): void {
    if (this.cancelled) abort();
    else this.upstream = abort;
  }

  cancel(): void {
    this.cancelled = true;
    this.upstream?.();
    this.controller.abort();
  }
}
