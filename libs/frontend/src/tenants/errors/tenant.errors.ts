import { FrontendError } from '../../errors/frontend.error';
import { RefusalReason } from '../../metrics/metric-names';

/** `--require-tenant` and a bearer key that matches no tenant: 401 (docs/api.md#tenants). */
export class InvalidApiKeyError extends FrontendError {
  readonly status = 401;
  readonly type = 'invalid_request_error';
  readonly errorType = 'validation';
  override readonly openAiCode = 'invalid_api_key';

  constructor() {
    super('Incorrect API key provided: no tenant holds this key');
    this.name = 'InvalidApiKeyError';
  }
}

/** A tenant over one of its limits: 429 with `Retry-After` (docs/api.md#tenants). */
export class TenantLimitError extends FrontendError {
  readonly status = 429;
  readonly type = 'rate_limit_error';
  readonly errorType = 'overload';
  override readonly openAiCode = 'rate_limit_exceeded';
  override readonly rejectReason: RefusalReason;
  override readonly headers: Readonly<Record<string, string>>;

  constructor(tenant: string, limit: string, reason: RefusalReason, retryAfterSecs: number) {
    super(`Rate limit reached for tenant ${tenant}: ${limit}`);
    this.name = 'TenantLimitError';
    this.rejectReason = reason;
    this.headers = { 'Retry-After': String(retryAfterSecs) };
  }
}
