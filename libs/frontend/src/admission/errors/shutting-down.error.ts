import { FrontendError } from '../../errors/frontend.error';
import { DRAINING } from '../refusal';

/** A shutdown is draining in-flight requests; new ones go to another replica. */
export class ShuttingDownError extends FrontendError {
  readonly status = 503;
  readonly type = 'service_unavailable';
  readonly errorType = 'unavailable';
  readonly refusal = DRAINING;

  constructor() {
    super(DRAINING.message);
    this.name = 'ShuttingDownError';
  }
}
