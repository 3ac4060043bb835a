import { MODEL } from './support/bus';
import { FakeWorker, writeHuge } from './support/fake-worker';
import { useSystem } from './support/fixtures';
import { chat } from './support/http';
import { waitFor } from './support/processes';

const CAP = 64 * 1024;
/** Far more than the cap, and more than socket buffers hold: the worker sees the abort. */
const HUGE = 32 * 1024 * 1024;

/**
 * Issue 11 item 5 (docs/security.md#limits-and-hardening): a worker's non-streamed answer and its error bodies are read
 * only up to `--max-upstream-body-bytes`; beyond it the client gets 502 `upstream_error` and
 * the upstream request is aborted.
 */
describe('worker answers over --max-upstream-body-bytes', () => {
  const sys = useSystem({ bus: true, frontend: ['--max-upstream-body-bytes', String(CAP)] });
  let worker: FakeWorker;
  const outcomes: Record<string, 'aborted' | 'finished'> = {};
  let reporting: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    // What to answer is chosen by the prompt, so one worker serves every case.
    worker = await FakeWorker.start(async (req, res) => {
      const body = JSON.parse(req.body) as { messages: Array<{ content: string }> };
      const mode = body.messages[0].content;
      if (mode === 'redirect') {
        res.writeHead(302, { location: 'https://elsewhere.example/v1/chat/completions' });
        res.end();
        return;
      }
      if (mode === 'slow-down') {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
        res.end(JSON.stringify({ error: { message: 'slow down' } }));
        return;
      }
      if (mode === 'small') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'small', choices: [{ message: { content: 'ok' } }] }));
        return;
      }
      const status = mode === 'huge-answer' ? 200 : mode === 'huge-4xx' ? 400 : 500;
      // No Content-Length: the cap must hold while reading, not only from a declared size.
      res.writeHead(status, { 'content-type': 'application/json' });
      outcomes[mode] = await writeHuge(res, HUGE);
    });
    // Reported every second, as a worker does: the cases outlive --worker-ttl-ms together.
    const heartbeat = (): void =>
      sys.bus.report(sys.fe.namespace, { worker_id: 'huge', endpoint: worker.url });
    heartbeat();
    reporting = setInterval(heartbeat, 1000);
    let last = '';
    await waitFor(async () => {
      const answer = await ask('small');
      last = `${answer.status} ${answer.text}`;
      return answer.status === 200;
    }, 'fake worker routed').catch((err: Error) => {
      throw new Error(`${err.message}; last answer: ${last}\n${sys.fe.proc.output}`);
    });
  });

  afterAll(async () => {
    clearInterval(reporting);
    await worker?.stop();
  });

  const ask = (mode: string, extra: Record<string, unknown> = {}) =>
    chat(sys.fe.url, { model: MODEL, messages: [{ role: 'user', content: mode }], ...extra });

  it.each([
    ['a non-streamed answer', 'huge-answer', {}],
    ['a 4xx error body', 'huge-4xx', {}],
    ['a 5xx error body', 'huge-5xx', {}],
    ['an error body answering a streamed request', 'huge-stream-error', { stream: true }],
  ])('answers 502 upstream_error for %s over the cap and aborts it', async (_what, mode, extra) => {
    const answer = await ask(mode, extra);
    expect(answer.status).toBe(502);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.json).toEqual({
      message: expect.stringContaining(`${CAP} bytes`) as unknown,
      type: 'upstream_error',
      code: 502,
    });
    await waitFor(() => outcomes[mode], `the worker's ${mode} ended`, 30_000);
    expect(outcomes[mode]).toBe('aborted');
  });

  // Issue 41 item 12a: the client needs where a redirect points and when to come back.
  it.each([
    ['non-streamed', {}],
    ['streamed', { stream: true }],
  ])("passes a worker's Location (3xx) and Retry-After (429) through, %s", async (_what, extra) => {
    // Not followed: the answer itself is what is checked.
    const moved = await fetch(`${sys.fe.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: 'user', content: 'redirect' }],
        ...extra,
      }),
      redirect: 'manual',
    });
    expect(moved.status).toBe(302);
    expect(moved.headers.get('location')).toBe('https://elsewhere.example/v1/chat/completions');
    const limited = await ask('slow-down', extra);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(limited.json).toEqual({ error: { message: 'slow down' } });
  });

  it('still relays an answer under the cap', async () => {
    const answer = await ask('small');
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ id: 'small' });
  });
});
