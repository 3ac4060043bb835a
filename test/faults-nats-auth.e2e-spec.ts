import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metricSamples, MODEL, startBridge, startWorker } from '@sluice/testkit';
import { useProcesses } from './support/fixtures';
import { chat, metricValue } from './support/http';
import { health, NatsServer } from './support/nats-server';
import { Proc, storeDataDir, uniqueNamespace, waitFor } from './support/processes';

const USER = 'sluice-fleet';
const OLD_PASSWORD = 'old-n4ts-pw';
const NEW_PASSWORD = 'new-n4ts-pw';
/** Generous: three apps start at once on a busy 2-core machine. */
const DEADLINE_MS = 60_000;

function authConfig(file: string, password: string): void {
  writeFileSync(file, `authorization { user: "${USER}", password: "${password}" }\n`);
}

const authErrors = (nats: NatsServer): number =>
  nats.output.split('\n').filter((l) => l.includes('authentication error')).length;

/**
 * Issue 41 item 5: a NATS server that refuses the apps' credentials at boot ("Authorization
 * Violation") and is fixed later (new password in its configuration, reloaded). The frontend, a
 * simulated worker publishing its own reports and the engine bridge keep retrying while refused,
 * as for any other connection failure, and connect once the server accepts them: the frontend's
 * bus comes up and reports from both publishers flow.
 */
describe('NATS refusing the credentials at boot, fixed later', () => {
  const group = useProcesses();
  let nats: NatsServer;
  let conf: string;
  let fe: Proc;
  let feUrl: string;
  const ns = uniqueNamespace('fauth');

  beforeAll(async () => {
    conf = join(mkdtempSync(join(tmpdir(), 'sluice-nats-auth-')), 'nats.conf');
    authConfig(conf, OLD_PASSWORD);
    nats = await NatsServer.start({ args: ['-c', conf], group });
    // Every app is given the password the server does not know yet.
    const url = `nats://${USER}:${NEW_PASSWORD}@127.0.0.1:${nats.port}`;
    const bus = ['--nats-url', url, '--namespace', ns];
    fe = group.app('frontend', [
      ...['--http-host', '127.0.0.1', '--http-port', '0'],
      ...[...bus, '--data-dir', storeDataDir()],
    ]);
    const [, , scraped] = await Promise.all([
      fe.waitForOutput(/frontend listening on (http:\/\/\S+)/, DEADLINE_MS),
      startWorker({
        flags: [...bus, '--worker-id', 'self-w', '--report-interval-ms', '200'],
        group,
      }),
      startWorker({ flags: ['--metrics-format', 'vllm'], group }),
    ]);
    [, feUrl] = fe.output.match(/frontend listening on (http:\/\/\S+)/) ?? [];
    await startBridge({
      natsUrl: url,
      namespace: ns,
      flags: ['--engine', 'vllm', '--target', `bridged-w=${scraped.url}`],
      group,
    });
  }, 3 * DEADLINE_MS);

  it(
    'keeps retrying while refused: the bus is down, nothing is listed',
    async () => {
      // Three clients retrying every half second: far more refusals than the two per client after
      // which the NATS client gives up by default.
      await waitFor(
        () => Promise.resolve(authErrors(nats) >= 20),
        'the apps keep retrying while the server refuses them',
        DEADLINE_MS,
      );
      const ready = await health(feUrl);
      expect(ready.status).toBe(503);
      expect(ready.body.details.error?.bus).toMatchObject({ status: 'down' });
      expect(await metricValue(feUrl, 'sluice_frontend_bus_connected')).toBe(0);
      expect((await chat(feUrl)).status).toBe(404);
    },
    3 * DEADLINE_MS,
  );

  it(
    'connects every app once the server accepts the credentials; reports flow',
    async () => {
      authConfig(conf, NEW_PASSWORD);
      nats.reload();
      await waitFor(async () => (await health(feUrl)).status === 200, 'bus up', DEADLINE_MS);
      expect(await metricValue(feUrl, 'sluice_frontend_bus_connected')).toBe(1);
      // Both publishers' reports reach the frontend: the worker's own and the bridge's.
      await waitFor(
        async () => {
          const text = await (await fetch(`${feUrl}/metrics`)).text();
          return ['self-w', 'bridged-w'].every(
            (id) =>
              metricSamples(text, 'dynamo_frontend_worker_busy', { worker_id: id }).length > 0,
          );
        },
        'reports of self-w and bridged-w',
        DEADLINE_MS,
      );
      const res = await chat(feUrl, { model: MODEL });
      expect(res.status).toBe(200);
    },
    3 * DEADLINE_MS,
  );

  it('never prints the password', () => {
    expect(fe.output).not.toContain(NEW_PASSWORD);
  });
});
