import { connect } from 'nats';
import { useSystem } from './support/fixtures';
import { chat, metricValue } from './support/http';
import { NatsServer } from './support/nats-server';
import { waitFor } from './support/processes';

const USER = 'sluice-fleet';
const PASSWORD = 'n4ts-s3cret-pw';

/**
 * Issue 6 point 7 (docs/security.md, "Locking NATS down"): a NATS server that requires
 * credentials. The frontend and a simulated worker take theirs from `--nats-url`, reports flow,
 * a client without credentials is refused, and no process prints the password.
 */
describe('NATS with its own authentication', () => {
  let nats: NatsServer;
  let url: string;
  beforeAll(async () => {
    nats = await NatsServer.start({ args: ['--user', USER, '--pass', PASSWORD] });
    url = `nats://${USER}:${PASSWORD}@127.0.0.1:${nats.port}`;
  });
  afterAll(() => nats?.stop());
  const sys = useSystem({
    frontend: () => ['--nats-url', url],
    workers: (s) => [
      [
        ...['--nats-url', url, '--namespace', s.namespace, '--worker-id', 'auth-w'],
        ...['--report-interval-ms', '200'],
      ],
    ],
  });

  it('connects with the credentials in --nats-url: reports reach the frontend', async () => {
    await waitFor(async () => (await chat(sys.fe.url)).status === 200, 'admitted via auth-w');
    expect(await metricValue(sys.fe.url, 'sluice_frontend_bus_connected')).toBe(1);
    expect(
      await metricValue(sys.fe.url, 'dynamo_frontend_worker_busy', { worker_id: 'auth-w' }),
    ).toBe(0);
  });

  it('is refused without credentials', async () => {
    await expect(connect({ servers: `127.0.0.1:${nats.port}`, reconnect: false })).rejects.toThrow(
      /Authorization/i,
    );
  });

  it('never prints the password', async () => {
    await Promise.all([sys.fe.proc.stop(), sys.worker.proc.stop()]);
    expect(sys.fe.proc.output).toMatch(/bus: nats:\/\/\*+@127\.0\.0\.1|bus: nats:\/\/127\.0\.0\.1/);
    expect(sys.fe.proc.output).not.toContain(PASSWORD);
    expect(sys.worker.proc.output).not.toContain(PASSWORD);
  });
});
