import { useProcesses } from './support/fixtures';
import { quietPort } from './support/processes';

/**
 * Issue 11, item 7: credentials in `--nats-url` never reach the output, also when NATS cannot
 * be reached at start (the publisher logs that it is waiting, and names the server it waits for).
 */
describe('NATS credentials with NATS down at boot', () => {
  const SECRET = 'nats-PASSWORD-3e8c1f';
  const procs = useProcesses('each');

  it.each([
    ['worker', (url: string) => ['--port', '0', '--nats-url', url]],
    [
      'bridge',
      (url: string) => [
        '--engine',
        'vllm',
        '--target',
        'http://127.0.0.1:9',
        '--http-host',
        '127.0.0.1',
        '--http-port',
        '0',
        '--nats-url',
        url,
      ],
    ],
  ])('the %s names the server it waits for without the password', async (app, flags) => {
    const closed = await quietPort(); // nothing listens there: NATS is "down"
    const url = `nats://sluice:${SECRET}@127.0.0.1:${closed}`;
    const proc = procs.app(app, flags(url));
    await proc.waitForOutput(/not reachable yet/, 60_000);
    expect(proc.output).toContain(`127.0.0.1:${closed}`);
    expect(proc.output).not.toContain(SECRET);
  });
});
