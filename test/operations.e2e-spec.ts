import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { chat, openStream, post } from './support/http';
import { waitFor } from './support/processes';
import { CONTRACT_METRICS } from './support/contract-metrics';

/** Operations surface: probes, metrics, OpenAPI, request ids, logs, the example policy, drain. */
describe('operations', () => {
  const sys = useSystem({
    bus: true,
    workers: [['--speedup', '1']],
    frontend: [
      ...['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.8'],
      ...['--max-inflight-per-key', '1'],
    ],
  });

  beforeAll(async () => {
    sys.bus.report(sys.fe.namespace, {
      worker_id: 'ops-w',
      endpoint: sys.worker.url,
      active_decode_blocks: 10,
    });
    await waitFor(async () => (await chat(sys.fe.url)).status === 200, 'worker admitted');
  });

  it('answers /live and /health as probes', async () => {
    const live = await fetch(`${sys.fe.url}/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    const health = await fetch(`${sys.fe.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      status: 'ok',
      details: { serving: { status: 'up' }, bus: { status: 'up' }, database: { status: 'up' } },
    });
  });

  it('exports every metric family of docs/metrics.md at /metrics', async () => {
    const res = await fetch(`${sys.fe.url}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    for (const name of CONTRACT_METRICS) {
      expect(text).toContain(`# TYPE ${name} `);
    }
  });

  it('serves the OpenAPI document', async () => {
    const doc = (await (await fetch(`${sys.fe.url}/docs-json`)).json()) as {
      openapi: string;
      paths: object;
    };
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/busy_threshold', '/health', '/live']),
    );
  });

  it('echoes a sane x-request-id and makes one up otherwise', async () => {
    const given = await fetch(`${sys.fe.url}/v1/models`, {
      headers: { 'x-request-id': 'trace-42' },
    });
    expect(given.headers.get('x-request-id')).toBe('trace-42');
    const odd = await fetch(`${sys.fe.url}/v1/models`, {
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    expect(odd.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs busy/free transitions as JSON lines', async () => {
    sys.bus.report(sys.fe.namespace, {
      worker_id: 'ops-w',
      endpoint: sys.worker.url,
      active_decode_blocks: 95,
    });
    await sys.fe.proc.waitForOutput(/"msg":"worker ops-w of model 'Qwen\/Qwen3-0.6B' is now BUSY/);
    sys.bus.report(sys.fe.namespace, {
      worker_id: 'ops-w',
      endpoint: sys.worker.url,
      active_decode_blocks: 10,
    });
    await sys.fe.proc.waitForOutput(/is now free/);
    const line = sys.fe.proc.output.split('\n').find((l) => l.includes('is now BUSY')) as string;
    expect(JSON.parse(line)).toMatchObject({ level: 30, context: 'WorkerMonitor' });
  });

  it('runs the example policy: one request in flight per API key, answered 429 through the same filter', async () => {
    const long = {
      model: MODEL,
      messages: [{ role: 'user', content: 'long' }],
      max_tokens: 300,
      stream: true,
    };
    const first = fetch(`${sys.fe.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer key-a' },
      body: JSON.stringify(long),
    });
    const firstRes = await first;
    expect(firstRes.status).toBe(200);
    const second = await post(
      `${sys.fe.url}/v1/chat/completions`,
      { ...long, stream: false },
      { authorization: 'Bearer key-a' },
    );
    expect(second.status).toBe(429);
    expect(second.json).toEqual({
      message: 'Too many requests in flight for this API key (limit 1), please retry later',
      type: 'rate_limit_error',
      code: 429,
    });
    const otherKey = await post(
      `${sys.fe.url}/v1/chat/completions`,
      { ...long, max_tokens: 2, stream: false },
      { authorization: 'Bearer key-b' },
    );
    expect(otherKey.status).toBe(200);
    await firstRes.text(); // the first request ends…
    await waitFor(
      async () =>
        (
          await post(
            `${sys.fe.url}/v1/chat/completions`,
            { ...long, max_tokens: 2, stream: false },
            { authorization: 'Bearer key-a' },
          )
        ).status === 200,
      'key-a admitted again',
    );
  });
});

describe('graceful shutdown', () => {
  const sys = useSystem({
    bus: true,
    workers: [['--speedup', '1']],
    frontend: ['--shutdown-timeout-ms', '20000'],
  });

  it('drains in-flight streams, refuses new work, and exits 0', async () => {
    const { bus, worker, fe } = sys;
    bus.report(fe.namespace, { worker_id: 'drain-w', endpoint: worker.url });
    await waitFor(async () => (await chat(fe.url)).status === 200, 'worker admitted');
    const stream = await openStream(fe.url);
    expect(stream.status).toBe(200);
    fe.proc.kill('SIGTERM');
    await fe.proc.waitForOutput(/SIGTERM received/);
    expect((await fetch(`${fe.url}/health`)).status).toBe(503);
    const refused = await chat(fe.url);
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({
      type: 'service_unavailable',
      message: expect.stringMatching(/shutting down/),
    });
    const body = await stream.text();
    expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(await fe.proc.exited).toBe(0);
  });
});

describe('a user-written admission policy (apps/custom-guard-example)', () => {
  const bigModel = 'big/Llama-70B';
  const sys = useSystem({
    bus: true,
    workers: [['--model', bigModel]],
    frontend: [],
    app: 'custom-guard-example',
  });

  it('runs after the busy check and rejects through the same error filter', async () => {
    const { bus, worker, fe } = sys;
    bus.report(fe.namespace, { worker_id: 'big-w', endpoint: worker.url, model: bigModel });
    const body = { model: bigModel, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 };
    const refused = await waitFor(async () => {
      const res = await post(`${fe.url}/v1/chat/completions`, body);
      return res.status === 404 ? undefined : res; // until the worker is known
    }, 'worker known');
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual({
      message: 'This model is reserved for the batch team',
      type: 'permission_error',
      code: 403,
    });
    expect((await post(`${fe.url}/v1/chat/completions`, body, { 'x-team': 'batch' })).status).toBe(
      200,
    );
  });
});
