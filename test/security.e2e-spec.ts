import { MODEL } from './support/bus';
import { queryRows } from './support/database';
import { useSystem } from './support/fixtures';
import { post } from './support/http';
import { startFrontend, uniqueNamespace, waitFor } from './support/processes';
import { httpBytes, rawRequest } from './support/raw-http';

const TOKEN = 'sec-ADMIN-token-5d1c9e0b7a';
const OPS_TOKEN = 'sec-ops-token-c41a77e2';
const CANARY = 'PROMPT-CANARY-9f27c4e1';
const DEFAULT_BODY_LIMIT = 16 * 1024 * 1024;
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * Issue #6 point 7: admin tokens and request bodies never reach the logs (access log on, debug
 * level), security headers, CORS off, body limits and parameterised queries. Real PostgreSQL,
 * real NATS, a real simulated worker.
 */
describe('security', () => {
  const sys = useSystem({
    database: 'security',
    bus: true,
    workers: [[]],
    reporting: true,
    frontend: [
      ...['--admin-token', `admin:${TOKEN}`, '--admin-token', `ops:${OPS_TOKEN}`],
      ...['--access-log', 'true', '--log-level', 'debug'],
    ],
  });
  let port: number;

  beforeAll(async () => {
    port = sys.fe.port;
    await waitFor(
      async () => (await fetch(`${sys.fe.url}/v1/models`)).ok && (await chatOk()),
      'worker',
    );
  });

  const chatOk = async (): Promise<boolean> =>
    (
      await post(`${sys.fe.url}/v1/chat/completions`, {
        model: MODEL,
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 1,
      })
    ).status === 200;

  describe('admin tokens', () => {
    it('accepts each configured token as its own actor and refuses every near miss', async () => {
      const write = (model: string, token: string) =>
        post(
          `${sys.fe.url}/busy_threshold`,
          { model, active_decode_blocks_threshold: 0.6 },
          auth(token),
        );
      // Every configured token is compared, whichever position it has.
      expect((await write('sec/first', TOKEN)).status).toBe(200);
      expect((await write('sec/second', OPS_TOKEN)).status).toBe(200);
      const actors = async (model: string) =>
        (
          (await (
            await fetch(`${sys.fe.url}/busy_threshold/audit?model=${encodeURIComponent(model)}`)
          ).json()) as { entries: Array<{ actor: string }> }
        ).entries.map((e) => e.actor);
      expect(await actors('sec/first')).toEqual(['admin']);
      expect(await actors('sec/second')).toEqual(['ops']);
      // Whole tokens only: prefixes, extensions, other case, one character off, concatenations.
      const nearMisses = [
        TOKEN.slice(0, -1),
        `${TOKEN}x`,
        TOKEN.toUpperCase(),
        `${TOKEN.slice(0, -1)}${TOKEN.endsWith('a') ? 'b' : 'a'}`,
        `${TOKEN}${OPS_TOKEN}`,
        'x',
      ];
      for (const token of nearMisses) expect((await write('sec/miss', token)).status).toBe(403);
      expect(await actors('sec/miss')).toEqual([]);
    });
    it('without admin tokens, refuses a loopback write addressed by another name (DNS rebinding)', async () => {
      const open = await startFrontend(['--database-url', sys.db.url()], uniqueNamespace('sec'));
      try {
        const openPort = Number(new URL(open.url).port);
        const write = (host: string) =>
          rawRequest(
            openPort,
            httpBytes(
              'POST',
              '/busy_threshold',
              [
                ['Host', host],
                ['Content-Type', 'application/json'],
              ],
              JSON.stringify({ model: 'sec/rebind', active_decode_blocks_threshold: 0.4 }),
            ),
          );
        // What a browser sends after evil.example was re-resolved to 127.0.0.1.
        expect((await write(`evil.example:${openPort}`)).status).toBe(403);
        expect((await write('evil.example')).status).toBe(403);
        for (const host of [`localhost:${openPort}`, `127.0.0.1:${openPort}`, '[::1]']) {
          expect((await write(host)).status).toBe(200);
        }
        const page = (await (
          await fetch(`${open.url}/busy_threshold/audit?model=sec%2Frebind`)
        ).json()) as { entries: Array<{ actor: string }> };
        expect(page.entries.map((e) => e.actor)).toEqual(['anonymous', 'anonymous', 'anonymous']);
      } finally {
        await open.proc.stop();
      }
    });
  });

  describe('HTTP surface', () => {
    it('sends security headers on API answers, error answers and the browser pages', async () => {
      for (const path of ['/v1/models', '/busy_threshold', '/no/such/route', '/health']) {
        const res = await fetch(`${sys.fe.url}${path}`);
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
        expect(res.headers.get('x-powered-by')).toBeNull();
      }
      const page = await fetch(`${sys.fe.url}/docs`);
      expect(page.status).toBe(200);
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("object-src 'none'");
      expect(csp).toContain("frame-ancestors 'self'");
      expect(page.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      expect(page.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    });

    it('has CORS off: no Access-Control-Allow-Origin for a cross-origin request or preflight', async () => {
      const origin = { origin: 'http://evil.example' };
      const simple = await fetch(`${sys.fe.url}/v1/models`, { headers: origin });
      expect(simple.status).toBe(200);
      const preflight = await fetch(`${sys.fe.url}/busy_threshold`, {
        method: 'OPTIONS',
        headers: {
          ...origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
      expect(preflight.status).toBe(404);
      const write = await post(
        `${sys.fe.url}/busy_threshold`,
        { model: 'sec/cors', active_decode_blocks_threshold: 0.5 },
        { ...origin, ...auth(TOKEN) },
      );
      for (const res of [simple, preflight, write]) {
        for (const header of [
          'access-control-allow-origin',
          'access-control-allow-methods',
          'access-control-allow-headers',
          'access-control-allow-credentials',
        ]) {
          expect(res.headers.get(header)).toBeNull();
        }
      }
    });

    it('refuses the body types a cross-site HTML form can send without a preflight (415)', async () => {
      const bodies: Array<[string, string]> = [
        ['application/x-www-form-urlencoded', 'model=sec%2Fcsrf&active_decode_blocks_threshold=0'],
        ['text/plain', '{"model":"sec/csrf","active_decode_blocks_threshold":0}'],
        [
          'multipart/form-data; boundary=x',
          '--x\r\nContent-Disposition: form-data; name="model"\r\n\r\nsec/csrf\r\n--x--\r\n',
        ],
      ];
      for (const [type, body] of bodies) {
        const res = await fetch(`${sys.fe.url}/busy_threshold`, {
          method: 'POST',
          headers: { 'content-type': type, origin: 'http://evil.example', ...auth(TOKEN) },
          body,
        });
        expect(res.status).toBe(415);
      }
    });

    it(`answers a body over the default limit (16 MiB) with 413, by Content-Length or chunked`, async () => {
      // Refused on Content-Length alone, before a byte of the body is read.
      const declared = await rawRequest(
        port,
        httpBytes(
          'POST',
          '/v1/chat/completions',
          [['Content-Type', 'application/json']],
          `{"model":"${MODEL}","pad":"${'a'.repeat(DEFAULT_BODY_LIMIT)}"}`,
        ),
      );
      expect(declared.status).toBe(413);
      expect(JSON.parse(declared.body)).toEqual({
        message: 'Request body is too large',
        type: 'invalid_request_error',
        code: 413,
      });
      const chunk = 'a'.repeat(1 << 20);
      const chunks = Array.from(
        { length: 17 },
        () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`,
      );
      const chunked = await rawRequest(
        port,
        Buffer.concat([
          httpBytes('POST', '/v1/chat/completions', [
            ['Content-Type', 'application/json'],
            ['Transfer-Encoding', 'chunked'],
          ]),
          Buffer.from(`${chunks.join('')}0\r\n\r\n`),
        ]),
      );
      expect(chunked.status).toBe(413);
    });
  });

  describe('threshold store', () => {
    it('stores SQL-shaped model names verbatim: every query is parameterised', async () => {
      const names = [
        "x'); DROP TABLE threshold_audit; --",
        "' OR '1'='1",
        '%',
        '_',
        '$1',
        'back\\slash',
        '"quoted"',
        'model; SELECT pg_sleep(5)',
      ];
      for (const model of names) {
        const res = await post(
          `${sys.fe.url}/busy_threshold`,
          { model, active_prefill_tokens_threshold: 7 },
          auth(TOKEN),
        );
        expect(res.status).toBe(200);
        expect(res.json).toMatchObject({ model, active_prefill_tokens_threshold: 7 });
      }
      for (const model of names) {
        const page = (await (
          await fetch(`${sys.fe.url}/busy_threshold/audit?model=${encodeURIComponent(model)}`)
        ).json()) as { entries: Array<{ model: string }> };
        expect(page.entries.map((e) => e.model)).toEqual([model]);
      }
      const stored = await queryRows<{ model: string }>(
        sys.db.url(),
        'SELECT model FROM model_thresholds WHERE model = ANY($1) ORDER BY model',
        [names],
      );
      expect(stored.map((r) => r.model)).toEqual([...names].sort());
      const tables = await queryRows<{ n: string }>(
        sys.db.url(),
        "SELECT count(*) AS n FROM pg_tables WHERE tablename IN ('threshold_audit', 'model_thresholds')",
      );
      expect(tables[0].n).toBe('2');
    });

    it('takes the audit filter and cursor as values, never as SQL', async () => {
      const page = async (query: string) => fetch(`${sys.fe.url}/busy_threshold/audit${query}`);
      // A cursor that is not one the server handed out is refused before any query runs.
      for (const before of ['1 OR 1=1', '1; DROP TABLE threshold_audit', "1'--"]) {
        expect((await page(`?before=${encodeURIComponent(before)}`)).status).toBe(400);
      }
      // A filter that would match everything as SQL matches no model as a value.
      for (const model of ["' OR 1=1 --", 'x%', "') OR ('1'='1"]) {
        const res = await page(`?model=${encodeURIComponent(model)}`);
        expect(res.status).toBe(200);
        expect(((await res.json()) as { entries: unknown[] }).entries).toEqual([]);
      }
    });
  });

  // Last: it stops the frontend to read every log line it wrote.
  describe('what is logged', () => {
    it('never writes an admin token or a request body to the log, even at debug level', async () => {
      const write = { model: 'sec/model', active_decode_blocks_threshold: 0.7 };
      const expectations: Array<[Promise<{ status: number }>, number]> = [
        [post(`${sys.fe.url}/busy_threshold`, write, auth(TOKEN)), 200],
        [post(`${sys.fe.url}/busy_threshold`, write, auth(`${TOKEN}-wrong`)), 403],
        [post(`${sys.fe.url}/busy_threshold`, write, auth(TOKEN.toUpperCase())), 403],
        [post(`${sys.fe.url}/busy_threshold`, write, { authorization: TOKEN }), 401],
        [post(`${sys.fe.url}/busy_threshold`, { ...write, x: 1 }, auth(TOKEN)), 400],
        [post(`${sys.fe.url}/busy_threshold`, '{"model":', auth(TOKEN)), 400],
        [fetch(`${sys.fe.url}/busy_threshold`, { headers: auth(TOKEN) }), 200],
        [fetch(`${sys.fe.url}/metrics`, { headers: auth(TOKEN) }), 200],
        [fetch(`${sys.fe.url}/no/such/route`, { headers: auth(TOKEN) }), 404],
      ];
      const chatBody = {
        model: MODEL,
        messages: [{ role: 'user', content: `say ${CANARY}` }],
        max_tokens: 2,
      };
      const bodies: Array<[string, unknown, number]> = [
        ['/v1/chat/completions', chatBody, 200],
        ['/v1/chat/completions', { ...chatBody, stream: true }, 200],
        ['/v1/completions', { model: MODEL, prompt: CANARY, max_tokens: 2 }, 200],
        ['/v1/embeddings', { model: MODEL, input: [CANARY] }, 200],
        ['/v1/chat/completions', { messages: [{ content: CANARY }] }, 400],
        ['/v1/chat/completions', { ...chatBody, model: 'sec/unknown' }, 404],
        ['/v1/chat/completions', { ...chatBody, max_tokens: `${CANARY}` }, 400],
        ['/v1/chat/completions', `{"model":"${MODEL}","messages":[{"content":"${CANARY}"`, 400],
        [
          '/v1/chat/completions',
          { ...chatBody, deep: JSON.parse('['.repeat(200) + ']'.repeat(200)) as unknown },
          400,
        ],
        ['/busy_threshold', { model: 'sec/model', note: CANARY }, 400],
      ];
      for (const [path, body, status] of bodies) {
        expectations.push([post(`${sys.fe.url}${path}`, body, auth(TOKEN)), status]);
      }
      // The OpenAI key is a bearer token too: an admin token sent as one is not logged either.
      expectations.push([post(`${sys.fe.url}/v1/chat/completions`, chatBody, auth(TOKEN)), 200]);
      // A worker that fails: the error path logs, the body still does not.
      sys.bus.report(sys.namespace, {
        worker_id: 'sec-dead',
        model: 'sec/dead',
        endpoint: 'http://127.0.0.1:9',
      });
      await waitFor(
        async () =>
          (await post(`${sys.fe.url}/v1/chat/completions`, { ...chatBody, model: 'sec/dead' }))
            .status === 502,
        'dead worker known',
      );
      for (const [answer, status] of expectations) expect((await answer).status).toBe(status);
      // A 503 written before Fastify sees the request (the overload prescan) is logged as well.
      const busy = { ...chatBody, model: 'sec/busy' };
      const limit = { model: 'sec/busy', admission_control: 'token-capacity' };
      const set = await post(
        `${sys.fe.url}/busy_threshold`,
        { ...limit, active_decode_blocks_threshold: 0.5 },
        auth(TOKEN),
      );
      expect(set.status).toBe(200);
      sys.bus.report(sys.namespace, {
        worker_id: 'sec-busy',
        model: 'sec/busy',
        endpoint: 'http://127.0.0.1:9',
        active_decode_blocks: 90,
      });
      await waitFor(
        async () => (await post(`${sys.fe.url}/v1/chat/completions`, busy)).status === 503,
        'sec/busy refused',
      );
      const refused = await post(`${sys.fe.url}/v1/chat/completions`, busy, {
        'x-request-id': 'sec-refused-1',
      });
      expect(refused.status).toBe(503);

      // Stop first, so every buffered log line has been written.
      await sys.fe.proc.stop();
      const log = sys.fe.proc.output;
      expect(log).not.toContain(TOKEN);
      expect(log).not.toContain(TOKEN.toUpperCase());
      expect(log).not.toContain(CANARY);
      // Not vacuous: logging was on and saw these requests.
      expect(log).toMatch(/"url":"\/busy_threshold"/);
      expect(log).toMatch(/"url":"\/v1\/chat\/completions"/);
      expect(log).toMatch(
        /"reqId":"sec-refused-1","method":"POST","url":"\/v1\/chat\/completions","statusCode":503/,
      );
      expect(log).toMatch(/thresholds of 'sec\/model' changed by admin/);
    });
  });
});
