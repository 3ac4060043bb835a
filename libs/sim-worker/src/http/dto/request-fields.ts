import { InvalidRequestError } from '../errors/openai-http.error';

/**
 * Readers for the OpenAI request fields the worker uses. Hand-written rather than
 * class-validator DTOs: bodies pass through unknown fields untouched, and only the few fields
 * that change the answer are checked, with messages that name the field.
 */
export type RequestBody = Readonly<Record<string, unknown>>;

export function requestBody(body: unknown): RequestBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidRequestError('The request body must be a JSON object');
  }
  return body as RequestBody;
}

export function optionalModel(body: RequestBody): string | undefined {
  const model = body.model;
  if (model === undefined || model === null) return undefined;
  if (typeof model !== 'string') throw new InvalidRequestError("'model' must be a string");
  return model;
}

/** A positive integer, or undefined when the field is absent or null. */
export function optionalPositiveInteger(body: RequestBody, field: string): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidRequestError(`'${field}' must be an integer >= 1`);
  }
  return value;
}

export interface StreamFlags {
  readonly stream: boolean;
  readonly includeUsage: boolean;
}

export function streamFlags(body: RequestBody): StreamFlags {
  const stream = body.stream ?? false;
  if (typeof stream !== 'boolean') throw new InvalidRequestError("'stream' must be a boolean");
  const options = body.stream_options ?? undefined;
  if (options === undefined) return { stream, includeUsage: false };
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidRequestError("'stream_options' must be an object");
  }
  const includeUsage = (options as { include_usage?: unknown }).include_usage ?? false;
  if (typeof includeUsage !== 'boolean') {
    throw new InvalidRequestError("'stream_options.include_usage' must be a boolean");
  }
  return { stream, includeUsage: stream && includeUsage };
}

/** The simulator produces a single choice; silently answering one for n > 1 would mislead. */
export function assertSingleChoice(body: RequestBody): void {
  const n = optionalPositiveInteger(body, 'n');
  if (n !== undefined && n !== 1) throw new InvalidRequestError("only 'n': 1 is supported");
}

/** A string, or an array of strings, token ids or arrays of token ids (prompt / input). */
export function isTextOrTokens(value: unknown): boolean {
  if (typeof value === 'string') return true;
  if (!Array.isArray(value) || value.length === 0) return false;
  return value.every(
    (item) =>
      typeof item === 'string' ||
      Number.isInteger(item) ||
      (Array.isArray(item) && item.every((id) => Number.isInteger(id))),
  );
}
