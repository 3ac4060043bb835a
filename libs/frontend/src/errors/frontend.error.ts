import { ErrorType, RefusalReason } from '../metrics/metric-names';

/**
 * A domain error the OpenAI exception filter knows how to answer: HTTP status, the contract's
 * error `type`, and the `error_type` label it is counted under.
 */
export abstract class FrontendError extends Error {
  abstract readonly status: number;
  abstract readonly type: string;
  abstract readonly errorType: ErrorType;
  /** A refusal's reason, sent as `x-sluice-reject-reason` and counted; absent for other errors. */
  readonly rejectReason?: RefusalReason;
  /**
   * Set for the answers docs/api.md#tenants gives in OpenAI's own shape,
   * `{"error":{"message","type","code"}}`, where `code` is this string.
   */
  readonly openAiCode?: string;
  /** Headers the answer carries besides Content-Type (e.g. `Retry-After`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Builds an error without capturing a stack trace. For errors that are answers, not bugs (the
 * overload rejection runs tens of thousands of times a second), the trace is the costliest part.
 */
export function withoutStack<T extends Error>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
