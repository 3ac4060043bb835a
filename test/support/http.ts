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
 * `signal` to give it up.
 */
export function openStream(base: string, maxTokens = 200, signal?: AbortSignal): Promise<Response> {
  return fetch(`${base}/v1/chat/completions`, {
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
