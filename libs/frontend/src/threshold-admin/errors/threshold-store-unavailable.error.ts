import { FrontendError } from '../../errors/frontend.error';

/**
 * The database's error text names hosts, users and databases: it is for the log and for callers
 * with a valid admin token (`reveal`), never for anyone else.
 */
const withCause = (message: string, reason: string, reveal: boolean): string =>
  reveal ? `${message}: ${reason}` : message;

/** The database could not take the change; nothing was stored and nothing was applied. */
export class ThresholdStoreUnavailableError extends FrontendError {
  readonly status = 503;
  readonly type = 'service_unavailable';
  readonly errorType = 'unavailable';

  constructor(reason: string, reveal: boolean) {
    super(withCause('Threshold store unavailable, nothing was changed', reason, reveal));
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

  constructor(reason: string, reveal: boolean) {
    super(
      withCause(
        'Threshold store did not confirm the change, it may have been stored ' +
          '(it then applies within a resync; check the audit log)',
        reason,
        reveal,
      ),
    );
    this.name = 'ThresholdChangeUnconfirmedError';
  }
}
