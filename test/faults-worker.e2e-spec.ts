import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { chat, metricValue } from './support/http';
import { Heartbeat, liveTraffic } from './support/nats-server';
import { NATS_URL, uniqueNamespace, waitFor, WorkerProcess } from './support/processes';

const TTL_MS = 1500;
const UPSTREAM_TIMEOUT_MS = 1000;
const LONG = { max_tokens: 2000 }; // ~10 s of decode at speedup 1: surely in flight when hit
const OTHER = 'faults/self-reporting';
/** Generous: how soon things happen is the bench's business; here only that they do. */
const DEADLINE_MS = 30_000;

interface Streamed {
  status: number;
  contentType: string | null;
  text: Promise<{ text: string }>;
}

/** Opens a streamed chat completion and resolves once its first chunk has arrived. */
async function openStream(base: string): Promise<Streamed> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      ...LONG,
      stream: true,
    }),
  });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const first = await reader.read();
  let text = first.value ? decoder.decode(first.value, { stream: true }) : '';
  const rest = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text };
      text += decoder.decode(value, { stream: true });
    }
  })();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    text: rest,
  };
}

/**
 * Issue 6 point 3: real simulated workers die (SIGKILL) or hang (SIGSTOP) under requests. The
 * test publishes the load of the `t-*` workers itself, so it decides which one a request reaches;
 * the `s-*` workers serve another model and report for themselves, so their silence is real.
 */
describe('worker failure', () => {
  const ns = uniqueNamespace('fwork');
  const self = (id: string) => [
    ...['--model', OTHER, '--nats-url', NATS_URL, '--namespace', ns, '--worker-id', id],
    ...['--report-interval-ms', '300'],
  ];
  const specs: Array<[string, string[]]> = [
    ['t-dies', ['--speedup', '1']],
    ['t-retried', ['--speedup', '1']],
    ['t-spare', []],
    ['t-hangs', ['--speedup', '1']],
    ['s-dies', self('s-dies')],
    ['s-hangs', ['--speedup', '1', ...self('s-hangs')]],
    ['s-spare', self('s-spare')],
  ];
  const sys = useSystem({
    namespace: ns,
    bus: true,
    workers: specs.map(([, flags]) => flags),
    frontend: [
      ...['--worker-ttl-ms', String(TTL_MS)],
      ...['--upstream-timeout-ms', String(UPSTREAM_TIMEOUT_MS)],
    ],
  });
  let beat: Heartbeat;
  beforeAll(async () => {
    beat = await Heartbeat.start(NATS_URL, ns);
  });
  afterAll(() => beat?.close());

  const w = (id: string): WorkerProcess => sys.workers[specs.findIndex(([name]) => name === id)];
  const inflight = () =>
    metricValue(sys.fe.url, 'dynamo_frontend_inflight_requests', { model: MODEL });
  const known = async (id: string) =>
    (await metricValue(sys.fe.url, 'dynamo_frontend_worker_busy', { worker_id: id })) !== undefined;
  const testReported = () => specs.map(([id]) => id).filter((k) => k.startsWith('t-'));
  /** Makes exactly these test-reported workers live. */
  const only = async (...ids: string[]) => {
    beat.set(...ids.map((id) => ({ worker_id: id, endpoint: w(id).url })));
    for (const id of testReported()) if (!ids.includes(id)) sys.bus.workerDown(ns, id);
    await sys.bus.flush();
    await waitFor(
      async () => {
        for (const id of testReported()) if ((await known(id)) !== ids.includes(id)) return false;
        return true;
      },
      `only ${ids.join(', ')} live`,
    );
  };

  it('answers every in-flight request of a SIGKILLed worker: 502 JSON or an SSE error', async () => {
    await only('t-dies');
    const stream = await openStream(sys.fe.url);
    const unary = chat(sys.fe.url, LONG);
    await waitFor(async () => (await inflight()) === 2, 'both requests in flight');
    await new Promise((r) => setTimeout(r, 200)); // the unary one reaches the worker
    w('t-dies').proc.kill('SIGKILL');

    const res = await unary;
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.json).toMatchObject({ type: 'upstream_error', code: 502 });
    expect((res.json as { message: string }).message).toMatch(/^Worker t-dies failed/);

    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    const { text } = await stream.text;
    const events = text.trim().split('\n\n');
    expect(events.length).toBeGreaterThan(1);
    expect(text).not.toContain('[DONE]');
    const last = JSON.parse(events[events.length - 1].replace(/^data: /, '')) as unknown;
    expect(last).toMatchObject({ error: { type: 'upstream_error', code: 502 } });
    await waitFor(async () => (await inflight()) === 0, 'nothing left in flight');
    // One warning per worker per 10 s, however many requests failed on it.
    await sys.fe.proc.waitForOutput(/"worker t-dies at http:\/\/127\.0\.0\.1:\d+ failed: [^;"]+; /);
  });

  it('retries a unary request that got no byte once, on another non-busy worker', async () => {
    await only('t-retried');
    const unary = chat(sys.fe.url, LONG);
    await waitFor(async () => (await inflight()) === 1, 'request in flight');
    await new Promise((r) => setTimeout(r, 200));
    await only('t-retried', 't-spare'); // a second worker appears; the request stays on the first
    w('t-retried').proc.kill('SIGKILL');
    const res = await unary;
    expect(res.status).toBe(200);
    expect(res.headers.get('x-sluice-worker-id')).toBe('t-spare');
    expect(res.json).toMatchObject({ object: 'chat.completion', model: MODEL });
    await sys.fe.proc.waitForOutput(
      /worker t-retried at \S+ failed: [^;"]+; retried on worker t-spare/,
    );
    // Until it is forgotten, the dead worker's share of new requests is retried the same way.
    for (let i = 0; i < 4; i++) {
      const next = await chat(sys.fe.url);
      expect(next.status).toBe(200);
      expect(next.headers.get('x-sluice-worker-id')).toBe('t-spare');
    }
  });

  it('answers 504 after --upstream-timeout-ms for a worker that stops responding (SIGSTOP)', async () => {
    await only('t-hangs');
    const stream = await openStream(sys.fe.url);
    w('t-hangs').proc.kill('SIGSTOP');
    try {
      const hung = Date.now();
      const res = await chat(sys.fe.url, LONG);
      expect(res.status).toBe(504);
      expect(res.json).toMatchObject({ type: 'upstream_error', code: 504 });
      // Not before the timeout: the worker was given its --upstream-timeout-ms.
      expect(Date.now() - hung).toBeGreaterThanOrEqual(UPSTREAM_TIMEOUT_MS - 50);
      // A stream that stalls mid-way ends with an SSE error event after the same timeout.
      const { text } = await stream.text;
      expect(text).toMatch(/data: \{"error":\{[^\n]*"type":"upstream_error","code":504\}\}\n\n$/);
      await waitFor(async () => (await inflight()) === 0, 'nothing left in flight');
      await sys.fe.proc.waitForOutput(
        /worker t-hangs at \S+ failed: (Headers|Body) Timeout Error; /,
      );
    } finally {
      w('t-hangs').proc.kill('SIGCONT');
    }
  });

  it('stops sending traffic to a SIGKILLed worker once it expires, with no error seen by clients', async () => {
    await waitFor(async () => (await known('s-dies')) && (await known('s-spare')), 's-* live');
    w('s-dies').proc.kill('SIGKILL');
    const killed = Date.now();
    const answers: string[] = [];
    // Until it is forgotten, requests that reach the dead worker are retried elsewhere; a few
    // are sent whatever happens, so there is always traffic to judge.
    for (let i = 0; i < 4 || (await known('s-dies')); i++) {
      if (Date.now() - killed > DEADLINE_MS) throw new Error('s-dies never expired');
      const res = await chat(sys.fe.url, { model: OTHER, stream: i % 2 === 1 });
      answers.push(`${res.status} ${res.text.includes('"error"') ? 'error' : 'ok'}`);
    }
    expect(new Set(answers)).toEqual(new Set(['200 ok']));
    await sys.fe.proc.waitForOutput(/worker s-dies of model '[^']+' removed \(expired\)/);
  });

  it('stops sending traffic to a hung worker once it expires: 504s end once it is forgotten', async () => {
    await waitFor(async () => (await known('s-hangs')) && (await known('s-spare')), 's-* live');
    w('s-hangs').proc.kill('SIGSTOP');
    const stop = liveTraffic(sys.fe.url, 2, OTHER);
    await waitFor(async () => !(await known('s-hangs')), 's-hangs forgotten', DEADLINE_MS);
    const traffic = await stop();
    const statuses = Object.keys(traffic.statuses);
    // Not vacuous: requests were sent while the worker hung, and each got an answer.
    expect(Object.values(traffic.statuses).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(statuses.every((s) => s === '200' || s === '504')).toBe(true);
    for (let i = 0; i < 6; i++) {
      const res = await chat(sys.fe.url, { model: OTHER });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-sluice-worker-id')).toBe('s-spare');
    }
  });
});
