import { OVERLOAD_BODY } from '@sluice/testkit';
import { createTestDatabase } from './support/database';
import { chat, openStream } from './support/http';
import { Heartbeat } from './support/nats-server';
import {
  AppProcess,
  FrontendProcess,
  NATS_URL,
  startFrontend,
  startWorker,
  uniqueNamespace,
  waitFor,
  WorkerProcess,
} from './support/processes';
import { TcpProxy } from './support/tcp-proxy';

/**
 * Issue 11, item 11: `GET /ready` (contract §3) keeps a replica in its Service while it can serve.
 * Admission goes on through a PostgreSQL outage on the last loaded thresholds, so the outage must
 * not take the replica out of rotation (`/health`, the dependency status, does report it);
 * a shutdown must, at once.
 */
describe('readiness (GET /ready)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let proxy: TcpProxy;
  let worker: WorkerProcess;
  let beat: Heartbeat;
  let fe: FrontendProcess;
  const ns = uniqueNamespace('ready');
  const status = async (path: string): Promise<number> => (await fetch(`${fe.url}${path}`)).status;

  beforeAll(async () => {
    db = await createTestDatabase('readiness');
    proxy = await TcpProxy.start(5432);
    const migrate = AppProcess.start('migrate', ['run', '--database-url', db.url()]);
    expect(await migrate.exited).toBe(0);
    worker = await startWorker(['--speedup', '1']);
    fe = await startFrontend(
      [
        ...['--database-url', db.url(proxy.port), '--shutdown-timeout-ms', '20000'],
        ...['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.5'],
      ],
      ns,
    );
    beat = await Heartbeat.start(NATS_URL, ns);
    beat.set({ worker_id: 'ready-w', endpoint: worker.url, active_decode_blocks: 10 });
    await waitFor(async () => (await chat(fe.url)).status === 200, 'worker admitted');
  });

  afterAll(async () => {
    await beat?.close();
    await Promise.all([fe?.proc.stop(), worker?.proc.stop()]);
    await proxy?.close();
    await db?.drop();
  });

  it('is ready with everything up', async () => {
    expect(await status('/ready')).toBe(200);
    const body = (await (await fetch(`${fe.url}/ready`)).json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 'ok', details: { serving: { status: 'up' } } });
  });

  it('stays ready with PostgreSQL down, admitting and refusing on the last loaded values', async () => {
    proxy.cut();
    try {
      await waitFor(async () => (await status('/health')) === 503, '/health reports the database');
      expect(await status('/ready')).toBe(200);
      expect((await chat(fe.url)).status).toBe(200);
      beat.set({ worker_id: 'ready-w', endpoint: worker.url, active_decode_blocks: 90 });
      const refused = await waitFor(async () => {
        const a = await chat(fe.url);
        return a.status === 503 ? a : undefined;
      }, 'the overload 503');
      expect(refused.text).toBe(OVERLOAD_BODY);
      expect(await status('/ready')).toBe(200);
    } finally {
      beat.set({ worker_id: 'ready-w', endpoint: worker.url, active_decode_blocks: 10 });
      proxy.restore();
    }
    await waitFor(async () => (await chat(fe.url)).status === 200, 'admitted again');
  });

  it('turns unready at once on SIGTERM, while in-flight requests finish', async () => {
    const stream = await openStream(fe.url);
    expect(stream.status).toBe(200);
    fe.proc.child.kill('SIGTERM');
    await fe.proc.waitForOutput(/SIGTERM received/);
    const unready = await fetch(`${fe.url}/ready`);
    expect(unready.status).toBe(503);
    expect(await unready.json()).toMatchObject({
      type: 'service_unavailable',
      code: 503,
      details: { error: { serving: { status: 'down', message: 'shutting down' } } },
    });
    expect((await stream.text()).trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(await fe.proc.exited).toBe(0);
  });
});
