import { OpenAiErrorBody } from '@sluice/contracts';

/**
 * The contract's error body (docs/api.md#errors), `{"message","type","code"}` plus optional `details`. Every
 * error answer of the frontend is built here, so the key order (part of the contract) has one
 * source.
 */
export function errorBody(
  message: string,
  type: string,
  code: number,
  details?: unknown,
): OpenAiErrorBody {
  const body: OpenAiErrorBody = { message, type, code };
  if (details !== undefined) body.details = details;
  return body;
}

/**
 * The same body as the bytes sent. A Buffer keeps the Content-Type exactly `application/json`:
 * Fastify appends a charset to strings and objects, and docs/api.md#errors spells the header out.
 */
export function encodeErrorBody(
  message: string,
  type: string,
  code: number,
  details?: unknown,
): Buffer {
  return Buffer.from(JSON.stringify(errorBody(message, type, code, details)));
}

/**
 * OpenAI's own error shape, `{"error":{"message","type","code"}}` with a string `code`, for the
 * tenant answers (401 `invalid_api_key`, 429 `rate_limit_exceeded`; docs/api.md#tenants) that
 * OpenAI clients read as such.
 */
export function encodeOpenAiError(message: string, type: string, code: string): Buffer {
  return Buffer.from(JSON.stringify({ error: { message, type, code } }));
}
