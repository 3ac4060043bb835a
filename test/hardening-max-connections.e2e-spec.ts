import { connect, Socket } from 'node:net';
import { useSystem } from './support/fixtures';
import { waitFor } from './support/processes';

const MAX_CONNECTIONS = 20;
const EXTRA = 5;
/** How long a refused socket may take to be closed: generous on a loaded machine, not a speed goal. */
const CLOSE_DEADLINE_MS = 5_000;
const REFUSED = 'sluice_frontend_connections_refused_total';

interface Watched {
  socket: Socket;
  closed: Promise<boolean>;
}

/** A raw connection, resolved once connected; `closed` settles true when the server closes it. */
async function open(port: number): Promise<Watched> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.on('data', () => undefined);
  const closed = new Promise<boolean>((resolve) => {
    socket.once('close', () => resolve(true));
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, closed };
}

async function closedWithin(w: Watched, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([w.closed, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Sends one GET on an open keep-alive connection and reads its whole answer. */
function get(socket: Socket, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let raw = Buffer.alloc(0);
    const onData = (d: Buffer): void => {
      raw = Buffer.concat([raw, d]);
      const split = raw.indexOf('\r\n\r\n');
      if (split === -1) return;
      const head = raw.subarray(0, split).toString('latin1');
      const rest = raw.subarray(split + 4);
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      let body: string | undefined;
      if (length) {
        if (rest.length >= Number(length[1])) body = rest.toString('utf8');
      } else if (rest.includes('\r\n0\r\n\r\n') || rest.subarray(0, 5).toString() === '0\r\n\r\n') {
        body = rest.toString('utf8');
      }
      if (body === undefined) return;
      cleanup();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), body });
    };
    const onClose = (): void => {
      cleanup();
      reject(new Error(`connection closed before the answer to ${path}`));
    };
    const cleanup = (): void => {
      socket.off('data', onData);
      socket.off('close', onClose);
    };
    socket.on('data', onData);
    socket.on('close', onClose);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  });
}

function refusedCount(metrics: string): number {
  const m = new RegExp(`^${REFUSED} (\\d+)`, 'm').exec(metrics);
  if (!m) throw new Error(`${REFUSED} missing from /metrics`);
  return Number(m[1]);
}

/**
 * Issue 41 item 7 (docs/security.md#limits-and-hardening): with `--max-connections`, connections
 * past the cap are closed at once and counted while established ones keep being served.
 */
describe('connection cap (--max-connections)', () => {
  const sys = useSystem({ frontend: ['--max-connections', String(MAX_CONNECTIONS)] });
  const sockets: Socket[] = [];

  afterAll(() => {
    for (const s of sockets) s.destroy();
  });

  async function watch(): Promise<Watched> {
    const w = await open(sys.fe.port);
    sockets.push(w.socket);
    return w;
  }

  it('closes connections past the cap at once, counts them, and keeps serving established ones', async () => {
    const keepAlive = await watch();
    expect((await get(keepAlive.socket, '/live')).status).toBe(200);
    const before = refusedCount((await get(keepAlive.socket, '/metrics')).body);

    // Fill the cap with silent sockets; each is connected before the next, so the server accepts
    // them in this order and the extras come after all of them.
    const silent: Watched[] = [];
    for (let i = 0; i < MAX_CONNECTIONS - 1; i++) silent.push(await watch());
    const extras: Watched[] = [];
    for (let i = 0; i < EXTRA; i++) extras.push(await watch());

    const extrasClosed = await Promise.all(extras.map((w) => closedWithin(w, CLOSE_DEADLINE_MS)));
    expect(extrasClosed).toEqual(Array(EXTRA).fill(true));
    // A connection the test process itself still keeps alive (the start-up health check) may
    // hold a slot, so at most one silent socket may be refused too; every refusal is counted.
    const silentClosed = (await Promise.all(silent.map((w) => closedWithin(w, 0)))).filter(Boolean);
    expect(silentClosed.length).toBeLessThanOrEqual(1);

    // The established keep-alive connection is still served, repeatedly.
    for (let i = 0; i < 3; i++) expect((await get(keepAlive.socket, '/live')).status).toBe(200);
    const after = refusedCount((await get(keepAlive.socket, '/metrics')).body);
    expect(after - before).toBe(EXTRA + silentClosed.length);

    // Closing connections frees their slots: a new client is served again.
    for (const w of silent) w.socket.destroy();
    await waitFor(
      async () => (await fetch(`${sys.fe.url}/live`).catch(() => null))?.status === 200,
      '/live on a new connection',
    );
  });
});
