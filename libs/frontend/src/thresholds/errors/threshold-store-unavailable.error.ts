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

/**
 * The COMMIT was sent but its answer was lost: the change may be stored. If it is, every
 * replica applies it at its next resync; reading the threshold or the audit log once the store
 * answers again shows which.
 */
export class ThresholdChangeUnconfirmedError extends FrontendError {
  readonly status = 503;
  readonly type = 'service_unavailable';
  readonly errorType = 'unavailable';

  constructor(reason: string) {
    super(
      `Threshold store did not confirm the change, it may have been stored ` +
        `(it then applies within a resync; check the audit log): ${reason}`,
    );
    this.name = 'ThresholdChangeUnconfirmedError';
  }
}
