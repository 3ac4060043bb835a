import { queryRows } from './support/database';
import { useSystem } from './support/fixtures';
import { FrontendProcess, waitFor } from './support/processes';
import { httpBytes, rawRequest } from './support/raw-http';
import { TcpProxy } from './support/tcp-proxy';

const TOKEN = 'hardening-admin-token-1';
const GENERIC = 'Threshold store unavailable, nothing was changed';

interface ErrorBody {
  message: string;
  type: string;
  code: number;
}

/**
 * Issue 11 items 8 and 9(c), against real frontends, real PostgreSQL (behind a relay the test
 * cuts) and real NATS: loopback writes that came through a proxy are refused, and callers
 * without a valid admin token never read the database's error text.
 */
describe('admin API hardening', () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    proxy = await TcpProxy.start(5432);
  });
  afterAll(() => proxy?.close());
  const openSys = useSystem({
    database: 'hadm',
    frontend: (s) => ['--database-url', s.db.url(proxy.port)],
  });
  const guardedSys = useSystem({
    frontend: () => ['--database-url', openSys.db.url(proxy.port), '--admin-token', `ops:${TOKEN}`],
  });

  const port = (fe: FrontendProcess) => Number(new URL(fe.url).port);
  const auditRows = async (model: string) =>
    Number(
      (
        await queryRows<{ n: string }>(
          openSys.db.url(),
          'SELECT count(*) AS n FROM threshold_audit WHERE model = $1',
          [model],
        )
      )[0].n,
    );
  const write = (fe: FrontendProcess, model: string, headers: Array<[string, string]> = []) =>
    rawRequest(
      port(fe),
      httpBytes(
        'POST',
        '/busy_threshold',
        [['Content-Type', 'application/json'], ...headers],
        JSON.stringify({ model, active_decode_blocks_threshold: 0.4 }),
      ),
    );
  const audit = (fe: FrontendProcess, headers: Array<[string, string]> = []) =>
    rawRequest(port(fe), httpBytes('GET', '/busy_threshold/audit', headers));
  const errorBody = (body: string): ErrorBody => JSON.parse(body) as ErrorBody;

  describe('item 8: loopback writes behind a proxy (no admin token configured)', () => {
    it('accepts a plain loopback write', async () => {
      const res = await write(openSys.fe, 'proxy/plain');
      expect(res.status).toBe(200);
      expect(await auditRows('proxy/plain')).toBe(1);
    });

    it.each([
      ['Forwarded', 'for=203.0.113.7;proto=https'],
      ['X-Forwarded-For', '203.0.113.7'],
      ['Via', '1.1 sidecar'],
    ])('refuses a loopback write that carries %s (403, nothing stored)', async (name, value) => {
      const model = `proxy/${name.toLowerCase()}`;
      const res = await write(openSys.fe, model, [[name, value]]);
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toBe('application/json');
      const body = errorBody(res.body);
      expect(body).toMatchObject({ type: 'permission_error', code: 403 });
      expect(body.message).toMatch(/proxy/i);
      expect(await auditRows(model)).toBe(0);
      const read = (await (
        await fetch(`${openSys.fe.url}/busy_threshold`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model }),
        })
      ).json()) as { active_decode_blocks_threshold: number | null };
      expect(read.active_decode_blocks_threshold).toBeNull();
    });

    it('still lets a token holder write through a proxy', async () => {
      const res = await write(guardedSys.fe, 'proxy/token', [
        ['Authorization', `Bearer ${TOKEN}`],
        ['X-Forwarded-For', '203.0.113.7'],
      ]);
      expect(res.status).toBe(200);
      expect(await auditRows('proxy/token')).toBe(1);
    });
  });

  describe('item 9(c): no database error text for callers without a valid admin token', () => {
    beforeAll(() => proxy.cut());
    afterAll(() => proxy.restore());

    it('answers an anonymous loopback write with a generic 503 and logs the cause', async () => {
      const res = await write(openSys.fe, 'dbdown/anon');
      expect(res.status).toBe(503);
      expect(errorBody(res.body)).toEqual({
        message: GENERIC,
        type: 'service_unavailable',
        code: 503,
      });
      await waitFor(
        () =>
          /threshold change for 'dbdown\/anon' by anonymous failed: \S/.test(
            openSys.fe.proc.output,
          ),
        'the cause in the log',
      );
    });

    it('answers an unauthenticated audit read with a generic 503 and logs the cause', async () => {
      for (const fe of [openSys.fe, guardedSys.fe]) {
        const res = await audit(fe);
        expect(res.status).toBe(503);
        expect(errorBody(res.body)).toEqual({
          message: GENERIC,
          type: 'service_unavailable',
          code: 503,
        });
        await waitFor(() => /threshold audit read failed: \S/.test(fe.proc.output), 'logged');
      }
      const wrong = await audit(guardedSys.fe, [['Authorization', 'Bearer not-the-token']]);
      expect(errorBody(wrong.body).message).toBe(GENERIC);
    });

    it('gives the cause to a caller with a valid admin token', async () => {
      const read = await audit(guardedSys.fe, [['Authorization', `Bearer ${TOKEN}`]]);
      expect(read.status).toBe(503);
      expect(errorBody(read.body).message).toMatch(new RegExp(`^${GENERIC}: \\S`));
      const res = await write(guardedSys.fe, 'dbdown/admin', [
        ['Authorization', `Bearer ${TOKEN}`],
      ]);
      expect(res.status).toBe(503);
      expect(errorBody(res.body).message).toMatch(new RegExp(`^${GENERIC}: \\S`));
    });
  });
});
