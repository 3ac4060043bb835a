import { OVERLOAD_MESSAGE } from '@sluice/contracts';
import { FrontendError } from '../../errors/frontend.error';

/** Every live worker of the model is busy, or the router queue refused the request. */
export class ServiceOverloadedError extends FrontendError {
  readonly status = 503;
  readonly type = 'service_unavailable';
  readonly errorType = 'overload';
  override readonly isRejection = true;

  constructor(
    readonly model: string,
    message: string = OVERLOAD_MESSAGE,
  ) {
    super(message);
    this.name = 'ServiceOverloadedError';
  }
}
