import { OVERLOAD_BODY } from '@sluice/testkit';
import { useSystem } from './support/fixtures';
import { chat, openStream } from './support/http';
import { Heartbeat } from './support/nats-server';
import { NATS_URL, waitFor } from './support/processes';
import { TcpProxy } from './support/tcp-proxy';

/**
 * Issue 11, item 11: `GET /ready` (docs/api.md#errors) keeps a replica in its Service while it can serve.
 * Admission goes on through a PostgreSQL outage on the last loaded thresholds, so the outage must
 * not take the replica out of rotation (`/health`, the dependency status, does report it);
 * a shutdown must, at once.
 */
describe('readiness (GET /ready)', () => {
  let proxy: TcpProxy;
  let beat: Heartbeat;
  beforeAll(async () => {
    proxy = await TcpProxy.start(5432);
  });
  const sys = useSystem({
    database: 'readiness',
    workers: [['--speedup', '1']],
    frontend: (s) => [
      ...['--database-url', s.db.url(proxy.port), '--shutdown-timeout-ms', '20000'],
      ...['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.5'],
    ],
  });
  const status = async (path: string): Promise<number> =>
    (await fetch(`${sys.fe.url}${path}`)).status;

  beforeAll(async () => {
    beat = await Heartbeat.start(NATS_URL, sys.namespace);
    beat.set({ worker_id: 'ready-w', endpoint: sys.worker.url, active_decode_blocks: 10 });
    await waitFor(async () => (await chat(sys.fe.url)).status === 200, 'worker admitted');
  });

  afterAll(async () => {
    await beat?.close();
    await proxy?.close();
  });

  it('is ready with everything up', async () => {
    expect(await status('/ready')).toBe(200);
    const body = (await (await fetch(`${sys.fe.url}/ready`)).json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 'ok', details: { serving: { status: 'up' } } });
  });

  it('stays ready with PostgreSQL down, admitting and refusing on the last loaded values', async () => {
    proxy.cut();
    try {
      await waitFor(async () => (await status('/health')) === 503, '/health reports the database');
      expect(await status('/ready')).toBe(200);
      expect((await chat(sys.fe.url)).status).toBe(200);
      beat.set({ worker_id: 'ready-w', endpoint: sys.worker.url, active_decode_blocks: 90 });
      const refused = await waitFor(async () => {
        const a = await chat(sys.fe.url);
        return a.status === 503 ? a : undefined;
      }, 'the overload 503');
      expect(refused.text).toBe(OVERLOAD_BODY);
      expect(await status('/ready')).toBe(200);
    } finally {
      beat.set({ worker_id: 'ready-w', endpoint: sys.worker.url, active_decode_blocks: 10 });
      proxy.restore();
    }
    await waitFor(async () => (await chat(sys.fe.url)).status === 200, 'admitted again');
  });

  it('turns unready at once on SIGTERM, while in-flight requests finish', async () => {
    const stream = await openStream(sys.fe.url);
    expect(stream.status).toBe(200);
    sys.fe.proc.kill('SIGTERM');
    await sys.fe.proc.waitForOutput(/SIGTERM received/);
    const unready = await fetch(`${sys.fe.url}/ready`);
    expect(unready.status).toBe(503);
    expect(await unready.json()).toMatchObject({
      type: 'service_unavailable',
      code: 503,
      details: { error: { serving: { status: 'down', message: 'shutting down' } } },
    });
    expect((await stream.text()).trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(await sys.fe.proc.exited).toBe(0);
  });
});
