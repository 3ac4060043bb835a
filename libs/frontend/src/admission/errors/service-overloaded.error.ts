import { FrontendError } from '../../errors/frontend.error';
import { OVERLOADED, Refusal } from '../refusal';

/** Every live worker of the model is busy, or the router queue refused the request. */
export class ServiceOverloadedError extends FrontendError {
  readonly status = 503;
  readonly type = 'service_unavailable';
  readonly errorType = 'overload';

  constructor(
    readonly model: string,
    /** The answer, pre-encoded: the busy-worker one, or one of the router queue's. */
    readonly refusal: Refusal = OVERLOADED,
  ) {
    super(refusal.message);
    this.name = 'ServiceOverloadedError';
  }
}
