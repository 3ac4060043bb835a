import { FrontendError } from '../../errors/frontend.error';

/** `If-Match` names a version of the model's thresholds that is no longer the stored one. */
export class ThresholdPreconditionFailedError extends FrontendError {
  readonly status = 412;
  readonly type = 'precondition_failed';
  readonly errorType = 'validation';

  constructor() {
    super(
      "If-Match does not match the current version of the model's thresholds, nothing was " +
        'changed: read them again for the current values and ETag',
    );
    this.name = 'ThresholdPreconditionFailedError';
  }
}
