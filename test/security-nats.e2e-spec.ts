import { connect } from 'nats';
import { chat, metricValue } from './support/http';
import { NatsServer } from './support/nats-server';
import {
  FrontendProcess,
  startFrontend,
  startWorker,
  uniqueNamespace,
  waitFor,
  WorkerProcess,
} from './support/processes';

const USER = 'sluice-fleet';
const PASSWORD = 'n4ts-s3cret-pw';

/**
 * Issue 6 point 7 (docs/security.md, "Locking NATS down"): a NATS server that requires
 * credentials. The frontend and a simulated worker take theirs from `--nats-url`, reports flow,
 * a client without credentials is refused, and no process prints the password.
 */
describe('NATS with its own authentication', () => {
  let nats: NatsServer;
  let fe: FrontendProcess;
  let worker: WorkerProcess;
  const ns = uniqueNamespace('fauth');

  beforeAll(async () => {
    nats = await NatsServer.start(['--user', USER, '--pass', PASSWORD]);
    const url = `nats://${USER}:${PASSWORD}@127.0.0.1:${nats.port}`;
    fe = await startFrontend(['--nats-url', url], ns);
    worker = await startWorker([
      ...['--nats-url', url, '--namespace', ns, '--worker-id', 'auth-w'],
      ...['--report-interval-ms', '200'],
    ]);
  });

  afterAll(async () => {
    await Promise.all([fe?.proc.stop(), worker?.proc.stop()]);
    await nats?.stop();
  });

  it('connects with the credentials in --nats-url: reports reach the frontend', async () => {
    await waitFor(async () => (await chat(fe.url)).status === 200, 'admitted via auth-w');
    expect(await metricValue(fe.url, 'sluice_frontend_bus_connected')).toBe(1);
    expect(await metricValue(fe.url, 'dynamo_frontend_worker_busy', { worker_id: 'auth-w' })).toBe(
      0,
    );
  });

  it('is refused without credentials', async () => {
    await expect(connect({ servers: `127.0.0.1:${nats.port}`, reconnect: false })).rejects.toThrow(
      /Authorization/i,
    );
  });

  it('never prints the password', async () => {
    await Promise.all([fe.proc.stop(), worker.proc.stop()]);
    expect(fe.proc.output).toMatch(/bus: nats:\/\/\*+@127\.0\.0\.1|bus: nats:\/\/127\.0\.0\.1/);
    expect(fe.proc.output).not.toContain(PASSWORD);
    expect(worker.proc.output).not.toContain(PASSWORD);
  });
});
