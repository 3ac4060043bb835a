import { FrontendError } from '../../errors/frontend.error';

/** The chosen worker failed (connection refused or reset, or a 5xx). */
export class UpstreamError extends FrontendError {
  readonly status: number = 502;
  readonly type = 'upstream_error';
  readonly errorType = 'upstream';

  constructor(
    message: string,
    /** True when no byte of the answer reached the client, so another worker may be tried. */
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/** The chosen worker did not answer within `--upstream-timeout-ms`. */
export class UpstreamTimeoutError extends UpstreamError {
  override readonly status = 504;

  constructor(timeoutMs: number) {
    super(`Worker did not answer within ${timeoutMs} ms`, false);
    this.name = 'UpstreamTimeoutError';
  }
}
