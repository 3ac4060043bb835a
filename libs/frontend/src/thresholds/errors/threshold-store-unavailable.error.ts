import { FrontendError } from '../../admission/errors';

/** The database could not take the change; nothing was stored and nothing was applied. */
export class ThresholdStoreUnavailableError extends FrontendError {
  readonly status = 503;
  readonly type = 'service_unavailable';
  readonly errorType = 'unavailable';

  constructor(reason: string) {
    super(`Threshold store unavailable, nothing was changed: ${reason}`);
    this.name = 'ThresholdStoreUnavailableError';
  }
}
