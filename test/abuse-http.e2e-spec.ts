import fc from 'fast-check';
import { MODEL } from './support/bus';
import { queryRows } from './support/database';
import { useSystem } from './support/fixtures';
import { Answer, metricValue, post } from './support/http';
import { httpBytes, rawRequest } from './support/raw-http';

const TOKEN = 'abuse-admin-token-7f3e';
const BODY_LIMIT = 32768;
const MAX_DEPTH = 128;
/** Fixed so a failure replays; fast-check prints the counterexample and its path. */
const SEED = 20261130;

/** Anything a client might put where a number, a string or an object belongs. */
const weird = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({
    unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
    minLength: 1,
    maxLength: 3,
  }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    'NaN',
    'Infinity',
    '-1',
    '1e400',
    'x'.repeat(300),
    '😀'.repeat(200),
    0,
    -0,
    -1,
    0.5,
    1.0000001,
    2 ** 53,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    true,
    null,
    [],
    {},
  ),
);

/** Keys that trip naive object handling, plus arbitrary unicode ones. */
const oddKey = fc.oneof(
  fc.constantFrom(
    'hasOwnProperty',
    'constructor',
    'toString',
    'valueOf',
    '__defineGetter__',
    'isPrototypeOf',
    'prototype',
    'then',
    'toJSON',
    'length',
    '',
    ' ',
    '0',
    'model ',
    'MODEL',
    'model\u0000',
    '__proto__',
  ),
  fc.string({ unit: 'binary', maxLength: 12 }),
);

const withOddKeys = <T extends object>(body: fc.Arbitrary<T>): fc.Arbitrary<object> =>
  fc
    .tuple(fc.dictionary(oddKey, weird, { maxKeys: 3 }), body)
    .map(([extra, fields]) => ({ ...extra, ...fields }));

const promptArb = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.array(fc.nat({ max: 50000 }), { maxLength: 8 }),
  fc.array(fc.string({ maxLength: 20 }), { maxLength: 4 }),
  weird,
);

const openAiBody = fc.oneof(
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  {
    weight: 5,
    arbitrary: withOddKeys(
      fc.record(
        {
          model: fc.oneof({ weight: 3, arbitrary: fc.constant(MODEL) }, weird),
          messages: fc.oneof(
            fc.constant([{ role: 'user', content: 'Hello there' }]),
            fc.array(
              fc.record(
                {
                  role: fc.oneof(fc.constantFrom('user', 'system', 'assistant'), weird),
                  content: fc.oneof(
                    fc.string({ unit: 'grapheme', maxLength: 60 }),
                    fc.array(fc.record({ type: fc.constant('text'), text: weird }), {
                      maxLength: 3,
                    }),
                    weird,
                  ),
                },
                { requiredKeys: [] },
              ),
              { maxLength: 4 },
            ),
            weird,
          ),
          prompt: promptArb,
          input: promptArb,
          stream: fc.oneof(fc.boolean(), weird),
          max_tokens: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer(), weird),
          max_completion_tokens: fc.oneof(fc.integer({ min: 1, max: 8 }), weird),
        },
        { requiredKeys: [] },
      ),
    ),
  },
);

const thresholdValue = fc.oneof(
  fc.constant(null),
  fc.double({ min: 0, max: 1 }),
  fc.nat({ max: 100000 }),
  fc.double(),
  fc.integer(),
  weird,
);

const thresholdBody = fc.oneof(
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        model: fc.oneof(fc.constantFrom('fuzz/a', 'fuzz/b', MODEL), weird),
        active_decode_blocks_threshold: thresholdValue,
        active_prefill_tokens_threshold: thresholdValue,
        active_prefill_tokens_threshold_frac: thresholdValue,
      },
      { requiredKeys: ['model'] },
    ),
  },
  {
    weight: 1,
    arbitrary: withOddKeys(
      fc.record({ model: fc.constantFrom('fuzz/a', MODEL) }, { requiredKeys: ['model'] }),
    ),
  },
);

/** Printable ASCII only: fetch refuses other header bytes (the raw-socket tests send those). */
const authHeader = fc.oneof(
  { weight: 5, arbitrary: fc.constant<string | undefined>(`Bearer ${TOKEN}`) },
  { weight: 1, arbitrary: fc.constant<string | undefined>(undefined) },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)) })
      .map((s) => `Bearer ${s}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      `bearer ${TOKEN}`,
      `Bearer   ${TOKEN}  `,
      `Basic ${TOKEN}`,
      TOKEN,
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN} ${TOKEN}`,
      'Bearer',
    ),
  },
);

const THRESHOLD_KEYS = [
  'active_decode_blocks_threshold',
  'active_prefill_tokens_threshold',
  'active_prefill_tokens_threshold_frac',
];

/** The guard's rule, restated: exactly the configured token after a case-insensitive Bearer. */
const authorised = (header: string | undefined): boolean =>
  header !== undefined &&
  /^Bearer\s+/i.test(header) &&
  header.replace(/^Bearer\s+/i, '').trim() === TOKEN;

const isWrite = (body: unknown): boolean =>
  typeof body === 'object' &&
  body !== null &&
  !Array.isArray(body) &&
  Object.keys(body).some((k) => k !== 'model');

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

function expectErrorBody(res: Answer): void {
  expect(res.json).toMatchObject({
    message: expect.any(String),
    type: expect.any(String),
    code: res.status,
  });
}

/**
 * Issue #6 point 4: hostile HTTP input against the built frontend (real PostgreSQL, real NATS,
 * a real simulated worker behind it). Never a 5xx, never a change on a 4xx, and the process
 * stays up and logs no internal error.
 */
describe('bad HTTP input (property-based, fast-check)', () => {
  // A small KV cache: the worker itself refuses (400) any max_tokens it could not hold.
  const sys = useSystem({
    database: 'abuse_http',
    workers: [['--worker-id', 'abuse-w', '--kv-total-blocks', '64']],
    reporting: true,
    frontend: ['--admin-token', `admin:${TOKEN}`, '--body-limit-bytes', String(BODY_LIMIT)],
    serving: true,
  });
  let port: number;

  const auditRows = async (): Promise<number> =>
    Number(
      (await queryRows<{ n: string }>(sys.db.url(), 'SELECT count(*) AS n FROM threshold_audit'))[0]
        .n,
    );
  const snapshot = async (): Promise<{ thresholds: string; audit: number; models: string }> => ({
    thresholds: await (await fetch(`${sys.fe.url}/busy_threshold`)).text(),
    audit: await auditRows(),
    models: await (await fetch(`${sys.fe.url}/v1/models`)).text(),
  });
  const expectAlive = async (): Promise<void> => {
    expect(sys.fe.proc.child.exitCode).toBeNull();
    expect((await fetch(`${sys.fe.url}/live`)).status).toBe(200);
  };

  beforeAll(() => {
    port = sys.fe.port;
  });

  afterAll(() => {
    // Whatever the properties did, nothing may have been logged as an internal error.
    expect(sys.fe?.proc.output ?? '').not.toMatch(/"level":50/);
  });

  it('answers arbitrary OpenAI bodies without a 5xx and changes no state', async () => {
    const before = await snapshot();
    const endpoints = ['/v1/chat/completions', '/v1/completions', '/v1/embeddings'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...endpoints), openAiBody, async (path, body) => {
        const res = await post(`${sys.fe.url}${path}`, body);
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) expectErrorBody(res);
      }),
      { numRuns: 250, seed: SEED },
    );
    expect(await snapshot()).toEqual(before);
    expect(
      await metricValue(sys.fe.url, 'dynamo_frontend_inflight_requests', { model: MODEL }),
    ).toBe(0);
    await expectAlive();
  });

  it('answers arbitrary /busy_threshold bodies and tokens: 4xx change nothing, only the token writes', async () => {
    await fc.assert(
      fc.asyncProperty(thresholdBody, authHeader, async (body, auth) => {
        const before = await snapshot();
        const res = await post(
          `${sys.fe.url}/busy_threshold`,
          body,
          auth === undefined ? {} : { authorization: auth },
        );
        expect(res.status).toBeLessThan(500);
        // 401/403 before the body is looked at; 400 only for what the JSON parser itself refuses.
        if (isWrite(body) && !authorised(auth)) expect([400, 401, 403]).toContain(res.status);
        const keys = typeof body === 'object' && body !== null ? Object.keys(body) : [];
        const wrote = res.status === 200 && THRESHOLD_KEYS.some((k) => keys.includes(k));
        const after = await snapshot();
        if (!wrote) {
          if (res.status !== 200) expectErrorBody(res);
          expect(after).toEqual(before);
          return;
        }
        expect(authorised(auth)).toBe(true);
        expect(after.audit).toBe(before.audit + 1);
        const listed = (JSON.parse(after.thresholds) as { thresholds: unknown[] }).thresholds;
        expect(listed).toContainEqual(res.json);
      }),
      { numRuns: 200, seed: SEED },
    );
    await expectAlive();
  });

  it('answers a body that is not JSON with 400 on every route', async () => {
    const notJson = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      // Valid JSON with a cut or an insertion somewhere: the near-misses a buggy client sends.
      fc
        .tuple(fc.jsonValue({ maxDepth: 3 }), fc.nat(), fc.string({ maxLength: 3 }))
        .map(([v, at, junk]) => {
          const text = JSON.stringify(v);
          const i = at % (text.length + 1);
          return text.slice(0, i) + junk + text.slice(i + (junk === '' ? 1 : 0));
        }),
    );
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/v1/chat/completions', '/v1/completions', '/busy_threshold'),
        notJson.filter((t) => !isJson(t) && !t.startsWith('\uFEFF')),
        async (path, text) => {
          const res = await post(`${sys.fe.url}${path}`, text, {
            authorization: `Bearer ${TOKEN}`,
          });
          expect(res.status).toBe(400);
          expect(res.json).toMatchObject({ type: 'invalid_request_error', code: 400 });
        },
      ),
      { numRuns: 120, seed: SEED },
    );
    expect(await snapshot()).toEqual(before);
  });

  it('answers any content type but JSON with 415', async () => {
    const mediaType = fc
      .oneof(
        fc.constantFrom(
          'text/plain',
          'text/plain; charset=utf-8',
          'text/html',
          'text/json',
          'application/xml',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/octet-stream',
          'application/jsonp',
          'application/json-patch+json',
          'application/ld+json',
          'application/*',
          '*/*',
          'json',
        ),
        fc.stringMatching(/^[a-z]{1,12}\/[a-z0-9.+-]{1,16}$/),
      )
      .filter((t) => t.toLowerCase() !== 'application/json');
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/v1/chat/completions', '/v1/embeddings', '/busy_threshold'),
        mediaType,
        async (path, type) => {
          const body = JSON.stringify({ model: MODEL, active_decode_blocks_threshold: 0.5 });
          const res = await fetch(`${sys.fe.url}${path}`, {
            method: 'POST',
            headers: { 'content-type': type, authorization: `Bearer ${TOKEN}` },
            body,
          });
          expect(res.status).toBe(415);
          expect(await res.json()).toMatchObject({ type: 'invalid_request_error', code: 415 });
        },
      ),
      { numRuns: 60, seed: SEED },
    );
    // No Content-Type at all (a Uint8Array body gets none from fetch).
    const bare = await fetch(`${sys.fe.url}/v1/chat/completions`, {
      method: 'POST',
      body: new TextEncoder().encode('{}'),
    });
    expect(bare.status).toBe(415);
    expect(await snapshot()).toEqual(before);
  });

  it(`answers a body over --body-limit-bytes (${BODY_LIMIT}) with 413, and one at the limit normally`, async () => {
    /** A JSON body of exactly `size` bytes for an unknown model (so 404 when it is read). */
    const bodyOf = (size: number): string => {
      const shell = JSON.stringify({ model: 'limit/model', messages: [{}], pad: '' });
      return shell.replace('"pad":""', `"pad":"${'a'.repeat(size - shell.length)}"`);
    };
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom(BODY_LIMIT - 1, BODY_LIMIT, BODY_LIMIT + 1),
          fc.integer({ min: 100, max: BODY_LIMIT * 3 }),
        ),
        fc.boolean(),
        async (size, chunked) => {
          const text = bodyOf(size);
          expect(Buffer.byteLength(text)).toBe(size);
          let status: number;
          let json: unknown;
          if (chunked) {
            // Transfer-Encoding: chunked, so the server cannot refuse on Content-Length alone.
            const chunks = text.match(/[^]{1,4096}/g) ?? [];
            const encoded = chunks.map((c) => `${c.length.toString(16)}\r\n${c}\r\n`).join('');
            const res = await rawRequest(
              port,
              Buffer.from(
                'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n' +
                  'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n' +
                  `${encoded}0\r\n\r\n`,
              ),
            );
            status = res.status;
            json = JSON.parse(res.body);
          } else {
            const res = await post(`${sys.fe.url}/v1/chat/completions`, text);
            status = res.status;
            json = res.json;
          }
          if (size > BODY_LIMIT) {
            expect(status).toBe(413);
            expect(json).toMatchObject({ type: 'invalid_request_error', code: 413 });
          } else {
            expect(status).toBe(404);
          }
        },
      ),
      { numRuns: 40, seed: SEED },
    );
    expect(await snapshot()).toEqual(before);
    await expectAlive();
  });

  it(`refuses JSON nested deeper than ${MAX_DEPTH} levels with 400, before anything recurses`, async () => {
    const nested = (depth: number, kind: 'array' | 'object'): string =>
      kind === 'array'
        ? '['.repeat(depth) + ']'.repeat(depth)
        : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom(MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, 2000),
          fc.integer({ min: 1, max: 5000 }),
        ),
        fc.constantFrom<'array' | 'object'>('array', 'object'),
        fc.constantFrom('extra', 'content', 'threshold'),
        async (depth, kind, where) => {
          const inner = nested(depth, kind);
          const [path, text] =
            where === 'threshold'
              ? ['/busy_threshold', `{"model":"fuzz/a","active_decode_blocks_threshold":${inner}}`]
              : where === 'content'
                ? [
                    '/v1/chat/completions',
                    `{"model":"${MODEL}","max_tokens":1,"messages":[{"role":"user","content":${inner}}]}`,
                  ]
                : [
                    '/v1/chat/completions',
                    `{"model":"${MODEL}","max_tokens":1,"messages":[{"role":"user","content":"hi"}],"extra":${inner}}`,
                  ];
          const res = await post(`${sys.fe.url}${path}`, text, {
            authorization: `Bearer ${TOKEN}`,
          });
          expect(res.status).toBeLessThan(500);
          // The body's own depth: the wrapper object, plus one or three levels down to `inner`.
          const total = depth + (where === 'content' ? 3 : 1);
          if (total > MAX_DEPTH) {
            expect(res.status).toBe(400);
            expect(res.json).toMatchObject({ message: expect.stringMatching(/nested deeper/) });
          } else if (where === 'extra') {
            expect(res.status).toBe(200);
          }
        },
      ),
      { numRuns: 60, seed: SEED },
    );
    await expectAlive();
  });

  describe('odd bytes over raw sockets', () => {
    /** Header value bytes: anything but CR and LF (which would end the header). */
    const headerBytes = fc
      .uint8Array({ minLength: 1, maxLength: 40 })
      .filter((b) => !b.includes(13) && !b.includes(10))
      .map((b) => Buffer.from(b));

    it('answers header values with non-UTF-8 and control bytes with 200 or 400, never worse', async () => {
      await fc.assert(
        fc.asyncProperty(headerBytes, async (bytes) => {
          const res = await rawRequest(
            port,
            httpBytes('GET', '/busy_threshold', [
              ['X-Odd', bytes],
              ['X-Request-Id', bytes],
            ]),
          );
          expect([200, 400]).toContain(res.status);
          if (res.status === 400) {
            expect(JSON.parse(res.body)).toMatchObject({
              type: 'invalid_request_error',
              code: 400,
            });
          } else {
            // An id it cannot trust is replaced by a fresh one, never echoed.
            expect(res.headers['x-request-id']).toMatch(/^[\w.:-]{1,128}$/);
          }
        }),
        { numRuns: 80, seed: SEED },
      );
      await expectAlive();
    });

    it('never lets an odd-byte Authorization or Content-Type write a threshold', async () => {
      const before = await snapshot();
      await fc.assert(
        fc.asyncProperty(headerBytes, fc.boolean(), async (bytes, asAuth) => {
          const body = JSON.stringify({ model: 'fuzz/raw', active_decode_blocks_threshold: 0.3 });
          const headers: Array<[string, string | Buffer]> = asAuth
            ? [
                ['Content-Type', 'application/json'],
                ['Authorization', Buffer.concat([Buffer.from('Bearer '), bytes])],
              ]
            : [
                ['Content-Type', bytes],
                ['Authorization', `Bearer ${TOKEN}`],
              ];
          const res = await rawRequest(port, httpBytes('POST', '/busy_threshold', headers, body));
          expect(asAuth ? [400, 401, 403] : [400, 415]).toContain(res.status);
        }),
        { numRuns: 80, seed: SEED },
      );
      expect(await snapshot()).toEqual(before);
      await expectAlive();
    });

    it('answers raw and percent-encoded odd bytes in paths with a 4xx', async () => {
      const pathBytes = fc
        .uint8Array({ minLength: 1, maxLength: 30 })
        .filter((b) => ![13, 10, 32].some((c) => b.includes(c)));
      await fc.assert(
        fc.asyncProperty(pathBytes, fc.boolean(), async (bytes, encoded) => {
          const tail = encoded
            ? [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')
            : Buffer.from(bytes).toString('latin1');
          const res = await rawRequest(port, httpBytes('GET', `/v1/${tail}`, []));
          expect(res.status).toBeGreaterThanOrEqual(400);
          expect(res.status).toBeLessThan(500);
        }),
        { numRuns: 80, seed: SEED },
      );
      await expectAlive();
    });

    it.each([
      { what: 'a percent-encoded NUL in the path', path: '/v1/models%00', status: 404 },
      {
        what: 'a percent-encoded NUL in a query value',
        path: '/busy_threshold/audit?model=%00',
        status: 400,
      },
      {
        what: 'a NUL inside a query value',
        path: '/busy_threshold/audit?model=a%00b',
        status: 400,
      },
      { what: 'malformed percent-encoding in the path', path: '/v1/%ZZ%ff', status: 400 },
      { what: 'an 8 KB path', path: `/v1/${'a'.repeat(8000)}`, status: 404 },
      { what: 'a 20 KB path', path: `/v1/${'a'.repeat(20000)}`, status: 431 },
      { what: 'a path of dot segments', path: '/docs/..%2f..%2fpackage.json', status: 404 },
    ])('answers $what with $status', async ({ path, status }) => {
      const res = await rawRequest(port, httpBytes('GET', path, []));
      expect(res.status).toBe(status);
      await expectAlive();
    });

    it('answers oversized headers with 431 and malformed framing with 400', async () => {
      const cases: Array<[Buffer, number]> = [
        [httpBytes('GET', '/live', [['X-Big', 'a'.repeat(60000)]]), 431],
        [Buffer.from('GET /live HTTP/1.1\r\nHost: x\r\nX-Nul: a\u0000b\r\n\r\n', 'latin1'), 400],
        [Buffer.from('GET /v1/\u00ff\u00fe HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'), 400],
        [Buffer.from('GET /live HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n', 'latin1'), 400],
        [
          Buffer.from(
            'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
              'Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
            'latin1',
          ),
          400,
        ],
        [
          Buffer.from(
            'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
              'Transfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n',
            'latin1',
          ),
          400,
        ],
        [Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]), 400],
      ];
      for (const [bytes, status] of cases) {
        const res = await rawRequest(port, bytes);
        expect(res.status).toBe(status);
        expect(JSON.parse(res.body)).toEqual({
          message: expect.any(String),
          type: 'invalid_request_error',
          code: status,
        });
      }
      await expectAlive();
    });
  });
});
