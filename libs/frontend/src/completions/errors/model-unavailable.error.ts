import { FrontendError } from '../../errors/frontend.error';

/** No worker has ever reported this model. */
export class ModelNotFoundError extends FrontendError {
  readonly status = 404;
  readonly type = 'not_found';
  readonly errorType = 'not_found';

  constructor(readonly model: string) {
    super(`Model '${model}' not found`);
    this.name = 'ModelNotFoundError';
  }
}

/** The model was served once, but every worker has gone (worker_down or TTL). */
export class NoWorkersAvailableError extends FrontendError {
  readonly status = 503;
  readonly type = 'service_unavailable';
  readonly errorType = 'unavailable';
  override readonly rejectReason = 'no_workers';

  constructor(readonly model: string) {
    super(`No workers available for model '${model}'`);
    this.name = 'NoWorkersAvailableError';
  }
}
