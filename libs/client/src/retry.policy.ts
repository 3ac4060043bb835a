/** Backoff settings; see `RetryOptions` for what each means. */
export interface BackoffSettings {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * Capped exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff and
 * Jitter"): `random(0, min(cap, base × 2^retry))`. Full jitter spreads the retries of many
 * clients rejected at the same moment over the whole window instead of sending them back as
 * one synchronised wave. `retry` counts from 0 for the first retry.
 */
export function backoffDelayMs(
  retry: number,
  settings: BackoffSettings,
  random: () => number,
): number {
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** retry);
  return random() * ceiling;
}

/**
 * `Retry-After` as milliseconds from `nowMs`: delay-seconds (RFC 9110 §10.2.3) or an HTTP
 * date. Undefined when absent or unparsable; a date in the past gives 0.
 */
export function parseRetryAfterMs(
  header: string | string[] | undefined,
  nowMs: number,
): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  // Decimals are not RFC delay-seconds, but some servers send them; read them as meant.
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  // Only a date (it has letters) may be parsed as one: Date.parse('1.5') is a valid date too.
  if (Number.isNaN(at) || !/[a-z]/i.test(value)) return undefined;
  return Math.max(0, at - nowMs);
}

/**
 * The wait before the next attempt: the jittered backoff, but never less than what the server
 * asked for — retrying earlier than `Retry-After` is certain to be shed again.
 */
export function retryDelayMs(
  retry: number,
  retryAfterMs: number | undefined,
  settings: BackoffSettings,
  random: () => number,
): number {
  return Math.max(backoffDelayMs(retry, settings, random), retryAfterMs ?? 0);
}
