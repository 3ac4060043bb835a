import { request } from 'node:http';
import type { ServerResponse } from 'node:http';
import { MODEL } from './support/bus';
import { FakeWorker } from './support/fake-worker';
import { useSystem } from './support/fixtures';
import { chat } from './support/http';
import { memoryQuiet, resetPeakRss, rssMiB, statusMiB } from './support/proc';
import { waitFor } from './support/processes';

const MiB = 1024 * 1024;
/** The default --max-upstream-body-bytes. */
const CAP = 64 * MiB;
/** Four answers in flight at once, each within the cap. */
const LARGE = 60 * MiB;
const CONCURRENT = 4;
const HEAD = '{"id":"large","choices":[{"message":{"content":"';
const TAIL = '"}}],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}';

/** What a raw HTTP client saw of one answer: its status, bytes, and whether it ended cleanly. */
interface Received {
  status: number;
  contentLength: string | undefined;
  bytes: number;
  head: string;
  tail: string;
  outcome: 'ended' | 'broken';
}

/**
 * Issue 41 item 12 (docs/security.md#limits-and-hardening, decision 0215): a worker's unary
 * answer that declares its length within `--max-upstream-body-bytes` is streamed to the client
 * as it arrives instead of being held whole; one declared over the cap is answered 502 without
 * being read; one that ends short of its declared length breaks the client's connection.
 */
describe('unary answers with a declared length', () => {
  const sys = useSystem({ bus: true, frontend: [] });
  let worker: FakeWorker;
  let reporting: NodeJS.Timeout | undefined;
  const waiting: Array<() => void> = [];
  const outcomes: Record<string, 'closed' | 'open'> = {};

  beforeAll(async () => {
    worker = await FakeWorker.start(async (req, res) => {
      const body = JSON.parse(req.body) as { messages: Array<{ content: string }> };
      const mode = body.messages[0].content;
      if (mode === 'small') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'small', choices: [{ message: { content: 'ok' } }] }));
        return;
      }
      if (mode === 'declared-over') {
        // Headers only: an answer that is read before it is refused would never be answered.
        outcomes[mode] = 'open';
        res.once('close', () => (outcomes[mode] = 'closed'));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': CAP + 1 });
        res.flushHeaders();
        return;
      }
      if (mode === 'short') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': 4 * MiB });
        await write(res, Buffer.alloc(MiB, 'x'));
        res.destroy();
        return;
      }
      // 'large': all of them start together, so a frontend that holds them holds them at once.
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (waiting.length === CONCURRENT) waiting.splice(0).forEach((go) => go());
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': LARGE });
      await writeAnswer(res, LARGE);
    });
    const heartbeat = (): void =>
      sys.bus.report(sys.fe.namespace, { worker_id: 'large', endpoint: worker.url });
    heartbeat();
    reporting = setInterval(heartbeat, 1000);
    await waitFor(async () => (await ask('small')).status === 200, 'fake worker routed');
  });

  afterAll(async () => {
    clearInterval(reporting);
    await worker?.stop();
  });

  const ask = (mode: string) =>
    chat(sys.fe.url, { model: MODEL, messages: [{ role: 'user', content: mode }] });

  it('relays four large answers whole without holding them in memory', async () => {
    const pid = sys.fe.proc.pid;
    await memoryQuiet(pid);
    resetPeakRss(pid);
    const before = rssMiB(pid);
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, () => receive(sys.fe.url, 'large')),
    );
    const rise = statusMiB(pid, 'VmHWM') - before;
    for (const answer of answers) {
      expect(answer).toEqual({
        status: 200,
        contentLength: String(LARGE),
        bytes: LARGE,
        head: HEAD,
        tail: TAIL,
        outcome: 'ended',
      });
    }
    // Held whole, the four answers would raise it by their size (240 MiB) at least (main before
    // decision 0215: 490 MiB). Relayed, the rise is what V8 and undici have not yet given back,
    // which reached half the size once in npm test on a loaded machine: the bound is 3/4 of it.
    expect(rise).toBeLessThan(((CONCURRENT * LARGE) / MiB) * 0.75);
  });

  it('answers 502 upstream_error to a declared length over the cap without reading it', async () => {
    const answer = await ask('declared-over');
    expect(answer.status).toBe(502);
    expect(answer.json).toEqual({
      message: expect.stringContaining(`${CAP} bytes`) as unknown,
      type: 'upstream_error',
      code: 502,
    });
    await waitFor(() => outcomes['declared-over'] === 'closed', 'the worker saw the abort');
  });

  it('breaks the connection of an answer its worker cut short of its declared length', async () => {
    const answer = await receive(sys.fe.url, 'short');
    expect(answer).toMatchObject({
      status: 200,
      contentLength: String(4 * MiB),
      outcome: 'broken',
    });
    expect(answer.bytes).toBeLessThan(4 * MiB);
    const metrics = await (await fetch(`${sys.fe.url}/metrics`)).text();
    expect(metrics).toMatch(
      /dynamo_frontend_requests_total\{[^}]*request_type="unary",status="error",error_type="upstream"\} [1-9]/,
    );
  });
});

/** Sends a unary chat request with node:http and reads its answer, keeping only its ends. */
function receive(base: string, mode: string): Promise<Received> {
  const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: mode }] });
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}/v1/chat/completions`,
      { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false },
      (res) => {
        const got: Received = {
          status: res.statusCode ?? 0,
          contentLength: res.headers['content-length'],
          bytes: 0,
          head: '',
          tail: '',
          outcome: 'broken',
        };
        res.on('data', (chunk: Buffer) => {
          if (got.head.length < HEAD.length) {
            got.head += chunk.subarray(0, HEAD.length - got.head.length).toString('latin1');
          }
          got.bytes += chunk.length;
          got.tail = (got.tail + chunk.subarray(-TAIL.length).toString('latin1')).slice(
            -TAIL.length,
          );
        });
        res.once('end', () => (got.outcome = 'ended'));
        res.once('close', () => resolve(got));
        res.once('error', () => undefined);
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

/** A JSON answer of exactly `total` bytes: HEAD, filler, TAIL (usage last, as engines put it). */
async function writeAnswer(res: ServerResponse, total: number): Promise<void> {
  await write(res, Buffer.from(HEAD));
  const filler = Buffer.alloc(64 * 1024, 'x');
  let left = total - HEAD.length - TAIL.length;
  while (left > 0 && !res.destroyed) {
    const part = left >= filler.length ? filler : filler.subarray(0, left);
    await write(res, part);
    left -= part.length;
  }
  await write(res, Buffer.from(TAIL));
  res.end();
}

function write(res: ServerResponse, chunk: Buffer): Promise<void> {
  if (res.destroyed || res.write(chunk)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
