import { metricSamples, MODEL } from '@sluice/testkit';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return request(url, 'POST', body, headers);
}

/** Any method; a body (a string as it is, else JSON) is sent as `application/json`. */
export async function request(
  url: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export function chat(base: string, extra: Record<string, unknown> = {}): Promise<Answer> {
  return post(`${base}/v1/chat/completions`, {
    model: MODEL,
    messages: [{ role: 'user', content: 'Hello there' }],
    max_tokens: 4,
    ...extra,
  });
}

/**
 * Opens a streamed chat completion of `maxTokens` tokens; read its body to follow it, abort
 * `signal` to give it up (with a `signal`, the stream may be left unread until then: see
 * `keepUnread`).
 */
export async function openStream(
  base: string,
  maxTokens = 200,
  signal?: AbortSignal,
): Promise<Response> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: maxTokens,
      stream: true,
    }),
    signal,
  });
  return signal ? keepUnread(res, signal) : res;
}

/** Responses a test holds open unread, until their signal aborts. */
const unread = new Set<Response>();

/**
 * Keeps `res` referenced until `signal` aborts, for a stream a test leaves unread to hold a
 * worker. undici cancels the body of a fetch Response collected while unread (nodejs/undici#3199):
 * a garbage collection in the test process would end the stream, and free the worker, at a time
 * no test chooses.
 */
export function keepUnread(res: Response, signal: AbortSignal): Response {
  if (signal.aborted) return res;
  unread.add(res);
  signal.addEventListener('abort', () => unread.delete(res), { once: true });
  return res;
}

/** Reads one sample from Prometheus text; labels must match exactly the ones given. */
export async function metricValue(
  base: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return parseMetric(text, name, labels);
}

/** The first sample of `name` whose labels include the given ones. */
export function parseMetric(
  text: string,
  name: string,
  labels: Record<string, string>,
): number | undefined {
  return metricSamples(text, name, labels)[0];
}

export { OVERLOAD_BODY } from '@sluice/testkit';
