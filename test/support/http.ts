import { MODEL } from './bus';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
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

/** Reads one sample from Prometheus text; labels must match exactly the ones given. */
export async function metricValue(
  base: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return parseMetric(text, name, labels);
}

export function parseMetric(
  text: string,
  name: string,
  labels: Record<string, string>,
): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      found[pair[1]] = pair[2];
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return undefined;
}

export const OVERLOAD_BODY =
  '{"message":"Service temporarily unavailable: All workers are busy, please retry later","type":"service_unavailable","code":503}';
