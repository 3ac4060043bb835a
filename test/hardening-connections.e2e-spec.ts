import { connect, Socket } from 'node:net';
import { MODEL } from './support/bus';
import { FakeWorker, sleep } from './support/fake-worker';
import { useSystem } from './support/fixtures';
import { chat } from './support/http';
import { waitFor } from './support/processes';

/** How long a test waits for the frontend to close a socket: generous, not a timing goal. */
const CLOSE_DEADLINE_MS = 20_000;
const IDLE_TIMEOUT_MS = 500;

interface Watched {
  socket: Socket;
  closed: Promise<'closed' | 'still open'>;
}

/** A raw connection to the frontend; `closed` settles when the server closes it, or at the deadline. */
function open(port: number): Watched {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.on('data', () => undefined);
  const closed = new Promise<'closed' | 'still open'>((resolve) => {
    const timer = setTimeout(() => resolve('still open'), CLOSE_DEADLINE_MS);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve('closed');
    });
  });
  return { socket, closed };
}

/**
 * Issue 11 item 4 (docs/security.md#limits-and-hardening): slowloris-style clients against a real frontend process with a
 * short `--idle-timeout-ms`. Each case waits for the close with a generous deadline.
 */
describe('idle and slow connections (--idle-timeout-ms)', () => {
  const sys = useSystem({ bus: true, frontend: ['--idle-timeout-ms', String(IDLE_TIMEOUT_MS)] });
  let port: number;
  let slowWorker: FakeWorker;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    port = sys.fe.port;
    // Streams an answer for several idle timeouts, with pauses longer than one between events.
    slowWorker = await FakeWorker.start(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 4; i++) {
        res.write(`data: {"n":${i}}\n\n`);
        await sleep(3 * IDLE_TIMEOUT_MS);
      }
      res.end('data: [DONE]\n\n');
    });
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await slowWorker?.stop();
  });

  function watch(): Watched {
    const w = open(port);
    sockets.push(w.socket);
    return w;
  }

  it('closes a connection that sends nothing, while another connection is answered', async () => {
    const idle = watch();
    const normal = await fetch(`${sys.fe.url}/v1/models`);
    expect(normal.status).toBe(200);
    expect(await idle.closed).toBe('closed');
  });

  it('cuts off a client that trickles its headers, while another connection is answered', async () => {
    const trickler = watch();
    trickler.socket.write('GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    let n = 0;
    const drip = setInterval(() => {
      if (!trickler.socket.destroyed) trickler.socket.write(`X-Drip-${n++}: x\r\n`);
    }, 100);
    try {
      const normal = await fetch(`${sys.fe.url}/v1/models`);
      expect(normal.status).toBe(200);
      expect(await trickler.closed).toBe('closed');
    } finally {
      clearInterval(drip);
    }
  });

  it('closes an idle keep-alive connection after its answer', async () => {
    const keepAlive = watch();
    let answer = '';
    keepAlive.socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    keepAlive.socket.write('GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(await keepAlive.closed).toBe('closed');
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('never cuts a streaming answer in progress, however long its pauses', async () => {
    sys.bus.report(sys.fe.namespace, { worker_id: 'slow', endpoint: slowWorker.url });
    await waitFor(() => modelListed(sys.fe.url), 'model listed');
    const answer = await chat(sys.fe.url, { stream: true });
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('data: {"n":3}');
    expect(answer.text).toContain('data: [DONE]');
  });
});

async function modelListed(url: string): Promise<boolean> {
  const list = (await (await fetch(`${url}/v1/models`)).json()) as { data: Array<{ id: string }> };
  return list.data.some((m) => m.id === MODEL);
}
