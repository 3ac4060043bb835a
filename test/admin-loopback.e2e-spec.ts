import * as testkit from '@sluice/testkit';
import { NATS_URL } from './support/processes';
import { httpBytes, rawRequest } from './support/raw-http';
import { TcpProxy } from './support/tcp-proxy';

const TOKEN = 'admin-loopback-token-1';

/**
 * Issue 41 item 3, with real frontend processes: a reverse proxy on the same host that adds no
 * header (a TCP relay here, as nginx's plain `proxy_pass` behaves for this purpose) makes every
 * client a loopback one. The frontend app therefore refuses threshold writes without a token
 * unless `--admin-allow-loopback` is given; the embedded start keeps loopback writes.
 */
describe('threshold writes without an admin token', () => {
  const group = new testkit.ProcessGroup();
  let plain: testkit.FrontendStarted;
  let allowing: testkit.FrontendStarted;
  let guarded: testkit.FrontendStarted;
  let embedded: testkit.Started;
  let proxy: TcpProxy;
  let allowingProxy: TcpProxy;

  const start = (adminAllowLoopback: boolean, flags: string[] = []) =>
    testkit.startFrontend({ natsUrl: NATS_URL, flags, group, adminAllowLoopback });

  beforeAll(async () => {
    [plain, allowing, guarded, embedded] = await Promise.all([
      start(false),
      start(true),
      start(false, ['--admin-token', `ops:${TOKEN}`]),
      testkit.startEmbedded({ group, env: { SLUICE_EMBEDDED_WORKERS: '0' } }),
    ]);
    [proxy, allowingProxy] = await Promise.all([
      TcpProxy.start(plain.port),
      TcpProxy.start(allowing.port),
    ]);
  });
  afterAll(async () => {
    await Promise.all([proxy?.close(), allowingProxy?.close()]);
    await group.stopAll();
  });

  const port = (url: string) => Number(new URL(url).port);
  const write = (to: number, model: string, headers: Array<[string, string]> = []) =>
    rawRequest(
      to,
      httpBytes(
        'POST',
        '/busy_threshold',
        [['Content-Type', 'application/json'], ...headers],
        JSON.stringify({ model, active_decode_blocks_threshold: 0.4 }),
      ),
    );
  const auditOf = async (url: string, model: string): Promise<unknown[]> => {
    const res = await fetch(`${url}/busy_threshold/audit?model=${encodeURIComponent(model)}`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { entries: unknown[] }).entries;
  };

  it('refuses a loopback write with 401 and stores nothing, by default', async () => {
    const res = await write(plain.port, 'loop/direct');
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ type: 'authentication_error', code: 401 });
    expect(JSON.parse(res.body).message).toMatch(/--admin-token/);
    expect(await auditOf(plain.url, 'loop/direct')).toEqual([]);
  });

  it('refuses a write relayed by a same-host proxy that adds no header', async () => {
    const res = await write(proxy.port, 'loop/proxied');
    expect(res.status).toBe(401);
    expect(await auditOf(plain.url, 'loop/proxied')).toEqual([]);
  });

  it('with --admin-allow-loopback, accepts loopback writes — and so the proxied one: the hazard', async () => {
    expect((await write(allowing.port, 'loop/allowed')).status).toBe(200);
    expect(await auditOf(allowing.url, 'loop/allowed')).toHaveLength(1);
    const relayed = await write(allowingProxy.port, 'loop/relayed');
    expect(relayed.status).toBe(200);
  });

  it('with an admin token, a write needs it whatever the address', async () => {
    expect((await write(guarded.port, 'loop/guarded')).status).toBe(401);
    const ok = await write(guarded.port, 'loop/guarded', [['Authorization', `Bearer ${TOKEN}`]]);
    expect(ok.status).toBe(200);
    expect(await auditOf(guarded.url, 'loop/guarded')).toHaveLength(1);
  });

  it('keeps loopback writes in the embedded one-command start', async () => {
    expect((await write(port(embedded.url), 'loop/embedded')).status).toBe(200);
    expect(await auditOf(embedded.url, 'loop/embedded')).toHaveLength(1);
  });
});
