import { Pool, request } from 'undici';
import { metricSamples, MODEL } from '@sluice/testkit';
import { nowNs } from './util';

export { MODEL, OVERLOAD_BODY } from '@sluice/testkit';

export function chatBody(
  model = MODEL,
  maxTokens = 8,
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    model,
    messages: [{ role: 'user', content: 'Hello there, how are you today?' }],
    max_tokens: maxTokens,
    ...extra,
  });
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export async function httpGet(url: string): Promise<Answer> {
  const res = await request(url);
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

export async function httpPost(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** Sum of every sample of a metric whose labels include the given ones. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  return metricSamples(text, name, labels).reduce((a, b) => a + b, 0);
}

export async function metrics(base: string): Promise<string> {
  return (await httpGet(`${base}/metrics`)).text;
}

/** Is this answer the contract's overload rejection (all workers busy)? */
export const isOverload = (status: number, text: string): boolean =>
  status === 503 && text.includes('All workers are busy');

const MAX_PROBES_IN_FLIGHT = 16;

/**
 * Open-loop prober: sends the same request about once a millisecond (whatever the answers), on
 * a small keep-alive pool, until an answer satisfies the predicate. Unlike probing back to back
 * it neither floods the frontend nor waits behind a slow in-flight answer, so its resolution is
 * ~1 ms plus the satisfying answer's own service time.
 */
export class PacedProber {
  private readonly pool: Pool;

  constructor(
    base: string,
    private readonly path: string,
    private readonly body: string,
    private readonly everyMs = 1,
  ) {
    this.pool = new Pool(base, { connections: 16, pipelining: 1, keepAliveTimeout: 60000 });
  }

  async once(): Promise<{ status: number; text: string }> {
    const res = await this.pool.request({
      path: this.path,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: this.body,
    });
    return { status: res.statusCode, text: await res.body.text() };
  }

  until(
    done: (status: number, text: string) => boolean,
    startNs: number,
    timeoutMs: number,
  ): Promise<{ ns: number; probes: number }> {
    return new Promise((resolve, reject) => {
      let probes = 0;
      let inflight = 0;
      let result: { ns: number; probes: number } | Error | null = null;
      const finish = (): void => {
        // Settle only when nothing is in flight, so no stale answer leaks into the next trial.
        if (result === null || inflight > 0) return;
        clearInterval(timer);
        if (result instanceof Error) reject(result);
        else resolve(result);
      };
      const fire = (): void => {
        if (result !== null) return;
        // A frontend that falls behind must not be buried under ever more probes.
        if (inflight >= MAX_PROBES_IN_FLIGHT) return;
        if (nowNs() - startNs > timeoutMs * 1e6) {
          result = new Error(`${this.path}: condition not met after ${timeoutMs} ms`);
          return finish();
        }
        probes++;
        inflight++;
        this.once()
          .then(({ status, text }) => {
            const t = nowNs();
            if (result === null && done(status, text)) result = { ns: t - startNs, probes };
          })
          .catch((err: unknown) => {
            if (result === null) result = err instanceof Error ? err : new Error(String(err));
          })
          .finally(() => {
            inflight--;
            finish();
          });
      };
      const timer = setInterval(fire, this.everyMs);
      fire();
    });
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
