import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { chat, metricValue } from './support/http';
import { waitFor } from './support/processes';

const INVALID = 'dynamo_frontend_kv_metrics_invalid_total';
const REQUESTS = 'dynamo_frontend_requests_total';

async function total(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      sum += Number(line.split(' ').pop());
  }
  return sum;
}

/**
 * Issue 11 item 6: a frontend never proxies to itself (reports naming its own listen address
 * are refused and counted), and a request that reaches a frontend from another one (the
 * `x-sluice-hop` header) is answered with the loop error instead of being proxied again.
 */
describe('request loops through frontends', () => {
  const a = useSystem({ bus: true, frontend: [] });
  const b = useSystem({ frontend: [] });

  it("refuses reports whose endpoint is the frontend's own listen address (counted, model stays unknown)", async () => {
    const port = new URL(a.fe.url).port;
    const before = (await metricValue(a.fe.url, INVALID)) ?? 0;
    const own = [`http://127.0.0.1:${port}`, `http://localhost:${port}/`, `http://0.0.0.0:${port}`];
    own.forEach((endpoint, i) =>
      a.bus.report(a.fe.namespace, { worker_id: `self-${i}`, endpoint, model: 'self/model' }),
    );
    await waitFor(
      async () => ((await metricValue(a.fe.url, INVALID)) ?? 0) >= before + own.length,
      'own-endpoint reports counted as invalid',
    );
    const answer = await chat(a.fe.url, { model: 'self/model' });
    expect(answer.status).toBe(404);
    expect(answer.json).toMatchObject({ type: 'not_found', code: 404 });
    // Logged when the reports were refused; the pipe may deliver it after the metric shows them.
    await a.fe.proc.waitForOutput(/own listen address/);
  });

  it('answers a loop between two frontends with the loop error, not a request storm', async () => {
    // Each frontend believes the other is a worker of the model.
    a.bus.report(a.fe.namespace, { worker_id: 'frontend-b', endpoint: b.fe.url });
    a.bus.report(b.fe.namespace, { worker_id: 'frontend-a', endpoint: a.fe.url });
    const listed = async (url: string): Promise<boolean> => {
      const list = (await (await fetch(`${url}/v1/models`)).json()) as {
        data: Array<{ id: string }>;
      };
      return list.data.some((m) => m.id === MODEL);
    };
    await waitFor(
      async () => (await listed(a.fe.url)) && (await listed(b.fe.url)),
      'model listed on both',
    );
    const [aBefore, bBefore] = [await total(a.fe.url, REQUESTS), await total(b.fe.url, REQUESTS)];

    const answer = await chat(a.fe.url);
    expect(answer.status).toBe(502);
    expect(answer.json).toEqual({
      message: expect.stringMatching(/loop/i) as unknown,
      type: 'upstream_error',
      code: 502,
    });

    // B answered the hop itself with 508: one request each, no storm.
    expect(await total(a.fe.url, REQUESTS)).toBe(aBefore + 1);
    expect(await total(b.fe.url, REQUESTS)).toBe(bBefore + 1);
  });

  it('answers a request that already carries the hop header with 508 and the JSON error body', async () => {
    a.bus.report(b.fe.namespace, { worker_id: 'frontend-a', endpoint: a.fe.url });
    const res = await fetch(`${b.fe.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-sluice-hop': '1' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(508);
    expect(await res.json()).toEqual({
      message: expect.stringMatching(/loop/i) as unknown,
      type: 'upstream_error',
      code: 508,
    });
  });
});
