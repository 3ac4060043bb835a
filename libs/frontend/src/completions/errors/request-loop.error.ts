import { UpstreamError } from './upstream.error';

/**
 * A request that another Sluice frontend proxied here (it carries the hop header): a load report
 * named a frontend as a worker. Answered 508 Loop Detected, in the contract's error body, so the
 * loop costs one extra hop instead of proxying on and on.
 */
export class RequestLoopError extends UpstreamError {
  override readonly status = 508;

  constructor(hopHeader: string) {
    super(
      `Request loop detected: this request was already proxied by a Sluice frontend (${hopHeader} header); a load report names a frontend as a worker endpoint`,
      false,
    );
    this.name = 'RequestLoopError';
  }
}

/** A worker that answered 508 is a frontend that saw our hop header: say so to the client. */
export const LOOP_STATUS = 508;
