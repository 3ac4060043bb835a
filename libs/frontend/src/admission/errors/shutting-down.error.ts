import { FrontendError } from '../../errors/frontend.error';

/** A shutdown is draining in-flight requests; new ones go to another replica. */
export class ShuttingDownError extends FrontendError {
  readonly status = 503;
  readonly type = 'service_unavailable';
  readonly errorType = 'unavailable';

  constructor() {
    super('Server is shutting down, please retry on another replica');
    this.name = 'ShuttingDownError';
  }
}
