import { FrontendError } from '../../errors/frontend.error';

export class AdminUnauthorizedError extends FrontendError {
  readonly status = 401;
  readonly type = 'authentication_error';
  readonly errorType = 'validation';

  constructor(message = 'Changing thresholds needs Authorization: Bearer <admin token>') {
    super(message);
    this.name = 'AdminUnauthorizedError';
  }
}

export class AdminForbiddenError extends FrontendError {
  readonly status = 403;
  readonly type = 'permission_error';
  readonly errorType = 'validation';

  constructor(message = 'This token may not change thresholds') {
    super(message);
    this.name = 'AdminForbiddenError';
  }
}
