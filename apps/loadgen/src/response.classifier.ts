import { estimateTextTokens } from '@sluice/contracts';

/** What became of one request that was sent. */
export type RequestOutcome =
  | { kind: 'ok'; latencyMs: number; ttftMs: number; outputTokens: number }
  /** Sluice shed the request: 503 `service_unavailable` (busy workers or a full queue). */
  | { kind: 'rejected'; latencyMs: number }
  /** Anything else; `label` is `http_<status>[:<type>]`, an error code or a stream problem. */
  | { kind: 'error'; label: string; connectFailure: boolean }
  /** Still in flight when the drain timeout (or Ctrl-C) aborted it. */
  | { kind: 'aborted' };

/** Errors meaning no connection could be made at all (as opposed to one that broke later). */
const CONNECT_FAILURES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const NO_WORKERS_PREFIX = 'No workers available';

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object'
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/**
 * A non-200 answer whose body has been read in full. Only a 503 with the contract's
 * `service_unavailable` body is a rejection; the "no workers for this model" 503 has the same
 * type but is not load shedding (docs/api.md#errors), so it is reported with the other errors.
 */
export function classifyErrorResponse(
  status: number,
  bodyText: string,
  latencyMs: number,
): RequestOutcome {
  const body = parseJson(bodyText);
  const type = field(body, 'type');
  const message = field(body, 'message');
  if (status === 503 && type === 'service_unavailable') {
    if (typeof message === 'string' && message.startsWith(NO_WORKERS_PREFIX)) {
      return { kind: 'error', label: 'http_503:no_workers', connectFailure: false };
    }
    return { kind: 'rejected', latencyMs };
  }
  const suffix = typeof type === 'string' && /^[a-z_]{1,40}$/.test(type) ? `:${type}` : '';
  return { kind: 'error', label: `http_${status}${suffix}`, connectFailure: false };
}

/** A complete non-streaming 200: time to first token is the whole latency. */
export function classifyUnaryResponse(bodyText: string, latencyMs: number): RequestOutcome {
  const body = parseJson(bodyText);
  if (body === undefined)
    return { kind: 'error', label: 'http_200:bad_json', connectFailure: false };
  const usage = field(field(body, 'usage'), 'completion_tokens');
  const choices = field(body, 'choices');
  const choice: unknown = Array.isArray(choices) ? choices[0] : undefined;
  const text = field(field(choice, 'message'), 'content') ?? field(choice, 'text');
  const outputTokens =
    typeof usage === 'number' ? usage : typeof text === 'string' ? estimateTextTokens(text) : 0;
  return { kind: 'ok', latencyMs, ttftMs: latencyMs, outputTokens };
}

/** A request that failed without a (complete) HTTP answer. */
export function classifyFailure(err: unknown): RequestOutcome {
  const code = field(err, 'code') ?? field(field(err, 'cause'), 'code');
  const name = err instanceof Error ? err.name : 'Error';
  const label = typeof code === 'string' && code !== '' ? code : name;
  return { kind: 'error', label, connectFailure: CONNECT_FAILURES.has(label) };
}
