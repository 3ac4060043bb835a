import { MODEL, TestBus } from './support/bus';
import { chat, metricValue } from './support/http';
import { Heartbeat, liveTraffic } from './support/nats-server';
import {
  FrontendProcess,
  NATS_URL,
  startFrontend,
  startWorker,
  uniqueNamespace,
  waitFor,
  WorkerProcess,
} from './support/processes';

const TTL_MS = 1500;
const UPSTREAM_TIMEOUT_MS = 1000;
const LONG = { max_tokens: 2000 }; // ~10 s of decode at speedup 1: surely in flight when hit
const OTHER = 'faults/self-reporting';

interface Streamed {
  status: number;
  contentType: string | null;
  firstChunkAt: number;
  text: Promise<{ text: string; endedAt: number }>;
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
      if (done) return { text, endedAt: Date.now() };
      text += decoder.decode(value, { stream: true });
    }
  })();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    firstChunkAt: Date.now(),
    text: rest,
  };
}

/**
 * Issue 6 point 3: real simulated workers die (SIGKILL) or hang (SIGSTOP) under requests. The
 * test publishes the load of the `t-*` workers itself, so it decides which one a request reaches;
 * the `s-*` workers serve another model and report for themselves, so their silence is real.
 */
describe('worker failure', () => {
  let bus: TestBus;
  let beat: Heartbeat;
  let fe: FrontendProcess;
  const w: Record<string, WorkerProcess> = {};
  const ns = uniqueNamespace('fwork');
  const inflight = () => metricValue(fe.url, 'dynamo_frontend_inflight_requests', { model: MODEL });
  const known = async (id: string) =>
    (await metricValue(fe.url, 'dynamo_frontend_worker_busy', { worker_id: id })) !== undefined;
  const testReported = () => Object.keys(w).filter((k) => k.startsWith('t-'));
  /** Makes exactly these test-reported workers live. */
  const only = async (...ids: string[]) => {
    beat.set(...ids.map((id) => ({ worker_id: id, endpoint: w[id].url })));
    for (const id of testReported()) if (!ids.includes(id)) bus.workerDown(ns, id);
    await bus.flush();
    await waitFor(
      async () => {
        for (const id of testReported()) if ((await known(id)) !== ids.includes(id)) return false;
        return true;
      },
      `only ${ids.join(', ')} live`,
    );
  };

  beforeAll(async () => {
    bus = await TestBus.connect();
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
    const started = await Promise.all(specs.map(([, flags]) => startWorker(flags)));
    specs.forEach(([id], i) => (w[id] = started[i]));
    fe = await startFrontend(
      ['--worker-ttl-ms', String(TTL_MS), '--upstream-timeout-ms', String(UPSTREAM_TIMEOUT_MS)],
      ns,
    );
    beat = await Heartbeat.start(NATS_URL, ns);
  });

  afterAll(async () => {
    await beat?.close();
    for (const p of Object.values(w))
      if (p.proc.child.exitCode === null) p.proc.child.kill('SIGCONT');
    await Promise.all([fe?.proc.stop(), ...Object.values(w).map((p) => p.proc.stop('SIGKILL'))]);
    await bus?.close();
  });

  it('answers every in-flight request of a SIGKILLed worker within 2 s: 502 JSON or an SSE error', async () => {
    await only('t-dies');
    const stream = await openStream(fe.url);
    const unary = chat(fe.url, LONG);
    await waitFor(async () => (await inflight()) === 2, 'both requests in flight');
    await new Promise((r) => setTimeout(r, 200)); // the unary one reaches the worker
    w['t-dies'].proc.child.kill('SIGKILL');
    const killed = Date.now();

    const res = await unary;
    expect(Date.now() - killed).toBeLessThan(2000);
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.json).toMatchObject({ type: 'upstream_error', code: 502 });
    expect((res.json as { message: string }).message).toMatch(/^Worker t-dies failed/);

    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    const { text, endedAt } = await stream.text;
    expect(endedAt - killed).toBeLessThan(2000);
    const events = text.trim().split('\n\n');
    expect(events.length).toBeGreaterThan(1);
    expect(text).not.toContain('[DONE]');
    const last = JSON.parse(events[events.length - 1].replace(/^data: /, '')) as unknown;
    expect(last).toMatchObject({ error: { type: 'upstream_error', code: 502 } });
    await waitFor(async () => (await inflight()) === 0, 'nothing left in flight');
    // One warning per worker per 10 s, however many requests failed on it.
    await fe.proc.waitForOutput(
      /"worker t-dies at http:\/\/127\.0\.0\.1:\d+ failed: [^;"]+; /,
      2000,
    );
  });

  it('retries a unary request that got no byte once, on another non-busy worker', async () => {
    await only('t-retried');
    const unary = chat(fe.url, LONG);
    await waitFor(async () => (await inflight()) === 1, 'request in flight');
    await new Promise((r) => setTimeout(r, 200));
    await only('t-retried', 't-spare'); // a second worker appears; the request stays on the first
    w['t-retried'].proc.child.kill('SIGKILL');
    const killed = Date.now();
    const res = await unary;
    expect(Date.now() - killed).toBeLessThan(2000);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-sluice-worker-id')).toBe('t-spare');
    expect(res.json).toMatchObject({ object: 'chat.completion', model: MODEL });
    await fe.proc.waitForOutput(
      /worker t-retried at \S+ failed: [^;"]+; retried on worker t-spare/,
      2000,
    );
    // Until it is forgotten, the dead worker's share of new requests is retried the same way.
    for (let i = 0; i < 4; i++) {
      const next = await chat(fe.url);
      expect(next.status).toBe(200);
      expect(next.headers.get('x-sluice-worker-id')).toBe('t-spare');
    }
  });

  it('answers 504 after --upstream-timeout-ms for a worker that stops responding (SIGSTOP)', async () => {
    await only('t-hangs');
    const stream = await openStream(fe.url);
    w['t-hangs'].proc.child.kill('SIGSTOP');
    const hung = Date.now();
    const res = await chat(fe.url, LONG);
    const waited = Date.now() - hung;
    expect(res.status).toBe(504);
    expect(res.json).toMatchObject({ type: 'upstream_error', code: 504 });
    expect(waited).toBeGreaterThanOrEqual(UPSTREAM_TIMEOUT_MS - 50);
    expect(waited).toBeLessThan(UPSTREAM_TIMEOUT_MS + 1000);
    // A stream that stalls mid-way ends with an SSE error event after the same timeout.
    const { text, endedAt } = await stream.text;
    expect(endedAt - hung).toBeLessThan(UPSTREAM_TIMEOUT_MS + 1000);
    expect(text).toMatch(/data: \{"error":\{[^\n]*"type":"upstream_error","code":504\}\}\n\n$/);
    await waitFor(async () => (await inflight()) === 0, 'nothing left in flight');
    await fe.proc.waitForOutput(
      /worker t-hangs at \S+ failed: (Headers|Body) Timeout Error; /,
      2000,
    );
    w['t-hangs'].proc.child.kill('SIGCONT');
  });

  it('stops sending traffic to a SIGKILLed worker within its TTL, with no error seen by clients', async () => {
    await waitFor(async () => (await known('s-dies')) && (await known('s-spare')), 's-* live');
    w['s-dies'].proc.child.kill('SIGKILL');
    const killed = Date.now();
    const answers: string[] = [];
    // Until it is forgotten, requests that reach the dead worker are retried elsewhere.
    for (let i = 0; await known('s-dies'); i++) {
      expect(Date.now() - killed).toBeLessThan(TTL_MS * 1.5);
      const res = await chat(fe.url, { model: OTHER, stream: i % 2 === 1 });
      answers.push(`${res.status} ${res.text.includes('"error"') ? 'error' : 'ok'}`);
    }
    expect(Date.now() - killed).toBeLessThan(TTL_MS * 1.5);
    expect(new Set(answers)).toEqual(new Set(['200 ok']));
    await fe.proc.waitForOutput(/worker s-dies of model '[^']+' removed \(expired\)/, 2000);
  });

  it('stops sending traffic to a hung worker within its TTL: 504s end once it is forgotten', async () => {
    w['s-hangs'].proc.child.kill('SIGSTOP');
    const hung = Date.now();
    const stop = liveTraffic(fe.url, 2, OTHER);
    await waitFor(async () => !(await known('s-hangs')), 's-hangs forgotten', TTL_MS * 1.5);
    expect(Date.now() - hung).toBeLessThan(TTL_MS * 1.5);
    const traffic = await stop();
    expect(Object.keys(traffic.statuses).every((s) => s === '200' || s === '504')).toBe(true);
    expect(traffic.slowestMs).toBeLessThan(UPSTREAM_TIMEOUT_MS + 1000); // never a hang
    for (let i = 0; i < 6; i++) {
      const res = await chat(fe.url, { model: OTHER });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-sluice-worker-id')).toBe('s-spare');
    }
  });
});
