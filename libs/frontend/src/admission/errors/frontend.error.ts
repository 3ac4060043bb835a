import { ErrorType } from '../../metrics/metric-names';

/**
 * A domain error the OpenAI exception filter knows how to answer: HTTP status, the contract's
 * error `type`, and the `error_type` label it is counted under.
 */
export abstract class FrontendError extends Error {
  abstract readonly status: number;
  abstract readonly type: string;
  abstract readonly errorType: ErrorType;
  /** Counted in `dynamo_frontend_model_rejection_total` and given a `Retry-After`. */
  readonly isRejection: boolean = false;
}
