import { chat, metricValue } from './support/http';
import { Heartbeat, health, NatsServer } from './support/nats-server';
import {
  Proc,
  spawnApp,
  startWorker,
  storeDataDir,
  uniqueNamespace,
  waitFor,
  WorkerProcess,
} from './support/processes';

/**
 * Issue 6 point 1, at boot: NATS is unreachable when the frontend starts. It must listen anyway
 * (liveness answers, readiness says the bus is down, the log says what it waits for), connect by
 * itself once NATS is there, and then act on reports.
 */
describe('NATS unreachable when the frontend starts', () => {
  let nats: NatsServer;
  let fe: Proc;
  let worker: WorkerProcess;
  let beat: Heartbeat | undefined;
  let url: string;
  const ns = uniqueNamespace('fboot');
  /** Generous: a frontend may take many times its usual 2 s to start on a busy 2-core machine. */
  const DEADLINE_MS = 60_000;

  beforeAll(async () => {
    nats = await NatsServer.start();
    await nats.stop(); // its port is now free: nothing listens there
    worker = await startWorker();
    // Port 0: the kernel picks a free one, read back from the start line.
    fe = spawnApp('frontend', [
      ...['--http-host', '127.0.0.1', '--http-port', '0'],
      ...['--nats-url', nats.url, '--namespace', ns, '--data-dir', storeDataDir()],
    ]);
  });

  afterAll(async () => {
    await beat?.close();
    await Promise.all([fe?.stop(), worker?.proc.stop()]);
    await nats?.stop();
  });

  it(
    'listens, answers /live, reports the bus down and says what it waits for',
    async () => {
      [, url] = await fe.waitForOutput(/frontend listening on (http:\/\/\S+)/, DEADLINE_MS);
      expect((await fetch(`${url}/live`)).status).toBe(200);
      const ready = await health(url);
      expect(ready.status).toBe(503);
      expect(ready.body.details.error?.bus).toMatchObject({ status: 'down' });
      expect(await metricValue(url, 'sluice_frontend_bus_connected')).toBe(0);
      // Not ready is a state, not a fault: the failed probe is a warning, nothing at error level.
      await fe.waitForOutput(/"level":40[^\n]*Health Check has failed/, DEADLINE_MS);
      expect(fe.output).not.toMatch(/"level":50/);
      await fe.waitForOutput(/still waiting for the bus at nats:\/\/127\.0\.0\.1:\d+/, DEADLINE_MS);
      // No worker is known: the contract's 404 for a model never seen, not a hang.
      expect((await chat(url)).status).toBe(404);
    },
    3 * DEADLINE_MS,
  );

  it('connects by itself when NATS comes up and acts on the first reports', async () => {
    await nats.restart();
    beat = await Heartbeat.start(nats.url, ns);
    beat.set({ worker_id: 'boot-w', endpoint: worker.url });
    await waitFor(async () => (await chat(url)).status === 200, 'admitted once NATS is up');
    expect((await health(url)).status).toBe(200);
    expect(await metricValue(url, 'sluice_frontend_bus_connected')).toBe(1);
  });

  it('stops cleanly on SIGTERM', async () => {
    expect(await fe.stop('SIGTERM', DEADLINE_MS)).toBe(0);
  });
});
