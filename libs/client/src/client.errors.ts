/** Base of every error this client throws itself (aborts rethrow the signal's reason). */
export class SluiceError extends Error {
  override name = 'SluiceError';
}

/** Sluice's error body (docs/api.md#errors): top-level `{message, type, code}`, not OpenAI's `{error}`. */
export interface SluiceErrorBody {
  message: string;
  type: string;
  code: number;
  details?: unknown;
}

/** A non-2xx answer that was not retried, or whose retries ran out. */
export class SluiceHttpError extends SluiceError {
  override name = 'SluiceHttpError';
  /** `type` from the body (`invalid_request_error`, `not_found`, `upstream_error`, …). */
  readonly type: string | undefined;
  readonly details: unknown;

  constructor(
    readonly status: number,
    /** The body as received; `parsed` holds it when it was Sluice's JSON error. */
    readonly body: string,
    readonly parsed: SluiceErrorBody | undefined,
    /** Requests made for this call, this one included. */
    readonly attempts: number,
  ) {
    super(parsed?.message ?? `HTTP ${status}${body ? `: ${body.slice(0, 200)}` : ''}`);
    this.type = parsed?.type;
    this.details = parsed?.details;
  }
}

/**
 * Sluice shed the request (503) and the client gave up: `maxAttempts` reached, the retry budget
 * was empty, or the server asked for a longer wait than `maxRetryAfterMs`.
 */
export class SluiceOverloadedError extends SluiceHttpError {
  override name = 'SluiceOverloadedError';

  constructor(
    status: number,
    body: string,
    parsed: SluiceErrorBody | undefined,
    attempts: number,
    /** The last `Retry-After`, in seconds (an HTTP date is converted); undefined if absent. */
    readonly retryAfter: number | undefined,
    /** True when the shared retry budget, not `maxAttempts`, stopped the retries. */
    readonly budgetExhausted: boolean,
  ) {
    super(status, body, parsed, attempts);
  }
}

/** The request never got an HTTP answer (connection refused, reset, timeout). */
export class SluiceConnectionError extends SluiceError {
  override name = 'SluiceConnectionError';

  constructor(
    readonly attempts: number,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** A stream that had started failed: an error event, or the end came before `data: [DONE]`. */
export class SluiceStreamError extends SluiceError {
  override name = 'SluiceStreamError';

  constructor(
    message: string,
    /** The `error` object of the event, when the server sent one. */
    readonly error?: unknown,
  ) {
    super(message);
  }
}

export function parseErrorBody(text: string): SluiceErrorBody | undefined {
  try {
    const json: unknown = JSON.parse(text);
    if (json && typeof json === 'object' && typeof (json as SluiceErrorBody).message === 'string') {
      return json as SluiceErrorBody;
    }
  } catch {
    // not JSON: the raw text stays in `body`
  }
  return undefined;
}
