import { createServer, Server, Socket } from 'node:net';
import { AddressInfo } from 'node:net';
import { ServerResponse } from 'node:http';
import { FakeWorker } from './support/fake-worker';
import { useSystem } from './support/fixtures';
import { chat, metricValue } from './support/http';
import { Heartbeat } from './support/nats-server';
import { NATS_URL, quietPort, waitFor } from './support/processes';

/** A worker's answer: an SSE stream for a streamed request, else a chat completion. */
function answer(res: ServerResponse, body: string, id: string): void {
  if ((JSON.parse(body) as { stream?: boolean }).stream === true) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: {"id":"${id}","choices":[{"delta":{"content":"ok"}}]}\n\ndata: [DONE]\n\n`);
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({ id, object: 'chat.completion', choices: [{ message: { content: 'ok' } }] }),
  );
}

/** A worker that accepts connections and resets each one as soon as a request arrives. */
class ResettingWorker {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly counted: { requests: number },
  ) {}

  get requests(): number {
    return this.counted.requests;
  }

  static async start(): Promise<ResettingWorker> {
    const sockets = new Set<Socket>();
    const counted = { requests: 0 };
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      socket.once('data', () => {
        counted.requests++;
        socket.resetAndDestroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    return new ResettingWorker(server, `http://127.0.0.1:${port}`, counted);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Issue 41 item 9: a worker that refuses the connection, resets it or answers 5xx before any
 * byte went to the client has the request sent to another free worker it has not tried, at most
 * `--upstream-retries` of them, counted per reason in `sluice_frontend_upstream_retries_total`;
 * never once a byte went to the client. Workers here are plain servers written in the test; the
 * test publishes their load reports, one model per case so that each case picks among its own.
 */
describe('retries before the first byte', () => {
  const RETRIES = 2;
  const sys = useSystem({
    bus: true,
    // Outlier ejection off: failing workers here keep being tried (test/outlier-ejection.e2e-spec.ts).
    frontend: ['--upstream-retries', String(RETRIES), '--eject-after', '0'],
  });
  let beat: Heartbeat;
  const servers: Array<{ stop(): Promise<void> }> = [];
  let good: FakeWorker;
  let failing500: FakeWorker[];
  let resets: ResettingWorker;
  let cuts: FakeWorker;
  let closesOnce: FakeWorker;
  let closed = 0;

  beforeAll(async () => {
    good = await FakeWorker.start((req, res) => answer(res, req.body, 'good'));
    failing500 = await Promise.all(
      [500, 502, 503, 500].map((status) =>
        FakeWorker.start((_req, res) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'engine fell over' } }));
        }),
      ),
    );
    resets = await ResettingWorker.start();
    // Sends the status line and one event, then cuts the connection.
    cuts = await FakeWorker.start((_req, res, raw) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"id":"cut","choices":[{"delta":{"content":"par"}}]}\n\n', () =>
        setTimeout(() => raw.socket.destroy(), 50),
      );
    });
    // Closes the connection under every other request without answering (as llama.cpp does
    // with a kept-alive connection), and answers the next one.
    closesOnce = await FakeWorker.start((req, res, raw) => {
      if (closesOnce.seen.length % 2 === 1) {
        closed++;
        raw.socket.destroy();
        return;
      }
      answer(res, req.body, 'closes-once');
    });
    servers.push(good, ...failing500, resets, cuts, closesOnce);
    const refused = `http://127.0.0.1:${await quietPort()}`;
    beat = await Heartbeat.start(NATS_URL, sys.namespace);
    beat.set(
      { worker_id: 'connect-refused', endpoint: refused, model: 'r/connect' },
      { worker_id: 'connect-good', endpoint: good.url, model: 'r/connect' },
      { worker_id: 'reset-resets', endpoint: resets.url, model: 'r/reset' },
      { worker_id: 'reset-good', endpoint: good.url, model: 'r/reset' },
      { worker_id: '5xx-fails', endpoint: failing500[0].url, model: 'r/5xx' },
      { worker_id: '5xx-good', endpoint: good.url, model: 'r/5xx' },
      ...failing500.map((w, i) => ({ worker_id: `all-${i}`, endpoint: w.url, model: 'r/all' })),
      { worker_id: 'cut-cuts', endpoint: cuts.url, model: 'r/cut' },
      { worker_id: 'cut-good', endpoint: good.url, model: 'r/cut' },
      { worker_id: 'closes-once', endpoint: closesOnce.url, model: 'r/keepalive' },
    );
    await waitFor(
      async () =>
        (await metricValue(sys.fe.url, 'dynamo_frontend_worker_busy', {
          worker_id: 'closes-once',
        })) !== undefined,
      'every worker known',
    );
  });

  afterAll(async () => {
    await beat?.close();
    await Promise.all(servers.map((s) => s.stop()));
  });

  const retries = async (model: string, reason: string): Promise<number> =>
    (await metricValue(sys.fe.url, 'sluice_frontend_upstream_retries_total', { model, reason })) ??
    0;
  /** Four requests, streamed and not: each is answered 200 by the good worker. */
  const allServedByGood = async (model: string): Promise<void> => {
    for (let i = 0; i < 4; i++) {
      const res = await chat(sys.fe.url, { model, stream: i % 2 === 1 });
      expect(`${res.status} ${res.headers.get('x-sluice-worker-id')}`).toBe(
        `200 ${model.slice(2)}-good`,
      );
      expect(res.text).toContain('"id":"good"');
    }
  };

  it('sends a request whose worker refused the connection to another worker (connect)', async () => {
    await allServedByGood('r/connect');
    // Round-robin sends at least one of the four to the refusing worker first.
    const counted = await retries('r/connect', 'connect');
    expect(counted).toBeGreaterThanOrEqual(1);
    expect(counted).toBeLessThanOrEqual(4);
  });

  it('sends a request whose worker reset the connection to another worker (reset)', async () => {
    await allServedByGood('r/reset');
    expect(resets.requests).toBeGreaterThanOrEqual(1);
    expect(await retries('r/reset', 'reset')).toBe(resets.requests);
  });

  it('sends a request whose worker answered 5xx to another worker (status_5xx)', async () => {
    await allServedByGood('r/5xx');
    expect(failing500[0].seen.length).toBeGreaterThanOrEqual(1);
    expect(await retries('r/5xx', 'status_5xx')).toBe(failing500[0].seen.length);
  });

  it('tries at most --upstream-retries other workers, each once, then answers 502', async () => {
    const seen = () => failing500.map((w) => w.seen.length);
    const before = seen();
    const res = await chat(sys.fe.url, { model: 'r/all' });
    expect(res.status).toBe(502);
    expect(res.json).toMatchObject({ type: 'upstream_error', code: 502 });
    const asked = seen().map((n, i) => n - before[i]);
    // The first worker and RETRIES others, none twice.
    expect(asked.filter((n) => n === 1)).toHaveLength(1 + RETRIES);
    expect(asked.filter((n) => n > 1)).toHaveLength(0);
    expect(await retries('r/all', 'status_5xx')).toBe(RETRIES);
  });

  it('never sends a request again once a byte of its answer went to the client', async () => {
    const goodBefore = good.seen.length;
    for (let i = 0; i < 2; i++) {
      const res = await chat(sys.fe.url, { model: 'r/cut', stream: true });
      expect(res.status).toBe(200);
      const cut = res.headers.get('x-sluice-worker-id') === 'cut-cuts';
      // The relayed event, then the error event: the request was not sent elsewhere.
      if (cut) {
        expect(res.text).toContain('"id":"cut"');
        expect(res.text).toMatch(/data: \{"error":\{[^\n]*"type":"upstream_error"/);
      }
    }
    expect(cuts.seen.length).toBe(1);
    expect(good.seen.length - goodBefore).toBe(1);
    for (const reason of ['connect', 'reset', 'status_5xx']) {
      expect(await retries('r/cut', reason)).toBe(0);
    }
  });

  it('sends again to the only worker when it closed the connection under the request (0102)', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await chat(sys.fe.url, { model: 'r/keepalive', stream: i === 1 });
      expect(res.status).toBe(200);
      expect(res.text).toContain('"id":"closes-once"');
    }
    expect(closed).toBe(2);
    expect(await retries('r/keepalive', 'reset')).toBe(2);
  });
});
