import { ProcessGroup, Started, startEmbedded } from '@sluice/testkit';
import { queryRows } from './support/database';
import { useSystem } from './support/fixtures';
import { Answer, post } from './support/http';
import { FrontendProcess, startFrontend, storeDataDir, waitFor } from './support/processes';

const ALICE = 'alice:alice-secret-token';
const asAlice = { authorization: 'Bearer alice-secret-token' };
/** Generous: how soon a change propagates or reverts is the bench's business; here that it does. */
const DEADLINE_MS = 30_000;
/** For a test that starts processes: each start alone may take up to 60 s on a busy machine. */
const PROCESS_TEST_MS = 240_000;
const STRONG_ETAG = /^"[^"]*"$/;
type Values = Record<string, number | null>;
interface AuditEntry {
  id: string;
  at: string;
  actor: string;
  model: string;
  before: Values;
  after: Values;
  source: string;
  reason: string | null;
  expires_at: string | null;
}

const etag = (a: Answer): string | null => a.headers.get('etag');
const read = (fe: FrontendProcess | { url: string }, model: string) =>
  post(`${fe.url}/busy_threshold`, { model });
const write = (
  fe: FrontendProcess | { url: string },
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) => post(`${fe.url}/busy_threshold`, body, { ...asAlice, ...headers });
const audit = async (fe: { url: string }, model: string): Promise<AuditEntry[]> =>
  (
    (await (
      await fetch(`${fe.url}/busy_threshold/audit?model=${encodeURIComponent(model)}&limit=100`)
    ).json()) as { entries: AuditEntry[] }
  ).entries;
/** Serves `values` (a subset of the entry) with a given ETag, or any when `tag` is undefined. */
const serves = async (fe: { url: string }, model: string, values: Values, tag?: string | null) => {
  const r = await read(fe, model);
  const json = r.json as Values;
  const same = Object.entries(values).every(([k, v]) => json[k] === v);
  return same && (tag === undefined || etag(r) === tag);
};

/**
 * docs/operations.md#changing-a-threshold-safely "safer threshold changes" end to end: two frontend replicas on one real PostgreSQL
 * database and real NATS. The periodic resync is pushed out of the way, so a change (and a
 * revert) reaches the other replica through the NATS notification, as within 1 s in production.
 */
describe('safer threshold changes (PostgreSQL, NATS, two replicas)', () => {
  const replicaFlags = (): string[] => [
    ...['--database-url', A.db.url(), '--admin-token', ALICE],
    ...['--threshold-resync-ms', '600000'],
  ];
  const A = useSystem({ database: 'safety', frontend: replicaFlags });
  const B = useSystem({ namespace: A.namespace, frontend: replicaFlags });
  const sql = <T>(text: string, params: unknown[] = []) => queryRows<T>(A.db.url(), text, params);
  const auditRows = async (model: string) =>
    Number(
      (
        await sql<{ n: string }>('SELECT count(*) AS n FROM threshold_audit WHERE model = $1', [
          model,
        ])
      )[0].n,
    );
  const expiryRows = async (model: string) =>
    Number(
      (
        await sql<{ n: string }>(
          "SELECT count(*) AS n FROM threshold_audit WHERE model = $1 AND source = 'ttl-expiry'",
          [model],
        )
      )[0].n,
    );

  it('answers reads and writes with a strong ETag that changes with every stored change, on every replica', async () => {
    const model = 'etag/model';
    const first = await read(A.fe, model);
    expect(first.status).toBe(200);
    expect(etag(first)).toMatch(STRONG_ETAG);
    expect(etag(await read(B.fe, model))).toBe(etag(first));

    const set = await write(A.fe, { model, active_decode_blocks_threshold: 0.5 });
    expect(set.status).toBe(200);
    expect(etag(set)).toMatch(STRONG_ETAG);
    expect(etag(set)).not.toBe(etag(first));
    expect(etag(await read(A.fe, model))).toBe(etag(set));
    await waitFor(
      () => serves(B.fe, model, { active_decode_blocks_threshold: 0.5 }, etag(set)),
      'B serves the change with its ETag',
      DEADLINE_MS,
    );

    // The same values written again on B are still a new stored change: a new ETag.
    const again = await write(B.fe, { model, active_decode_blocks_threshold: 0.5 });
    expect(again.status).toBe(200);
    expect(new Set([etag(first), etag(set), etag(again)]).size).toBe(3);
    await waitFor(
      async () => etag(await read(A.fe, model)) === etag(again),
      'A serves the ETag of the change made on B',
      DEADLINE_MS,
    );
  });

  it('refuses a stale If-Match with 412, changing nothing, on either replica', async () => {
    const model = 'stale/model';
    const old = etag(await write(A.fe, { model, active_decode_blocks_threshold: 0.6 })) as string;
    const current = await write(
      A.fe,
      { model, waiting_requests_threshold: 3 },
      { 'if-match': old },
    );
    expect(current.status).toBe(200);
    const rows = await auditRows(model);

    for (const fe of [A.fe, B.fe]) {
      const refused = await write(
        fe,
        { model, active_decode_blocks_threshold: 0.1 },
        { 'if-match': old },
      );
      expect(refused.status).toBe(412);
      expect(refused.headers.get('content-type')).toBe('application/json');
      expect(refused.json).toEqual({
        message: expect.stringMatching(/If-Match does not match.*nothing was changed/),
        type: 'precondition_failed',
        code: 412,
      });
    }
    expect(await auditRows(model)).toBe(rows);
    const stored = await sql<{ d: number; w: string }>(
      'SELECT active_decode_blocks_threshold AS d, waiting_requests_threshold AS w FROM model_thresholds WHERE model = $1',
      [model],
    );
    expect(stored).toEqual([{ d: 0.6, w: '3' }]);
    const now = await read(A.fe, model);
    expect(now.json).toMatchObject({
      active_decode_blocks_threshold: 0.6,
      waiting_requests_threshold: 3,
    });
    expect(etag(now)).toBe(etag(current));
  });

  it('takes a list of ETags or *, never a weak one, and answers a malformed If-Match with 400', async () => {
    const model = 'list/model';
    const tag = etag(await write(A.fe, { model, waiting_requests_threshold: 1 })) as string;
    const listed = await write(
      A.fe,
      { model, waiting_requests_threshold: 2 },
      { 'if-match': `"999999999", ${tag}` },
    );
    expect(listed.status).toBe(200);
    const now = etag(listed) as string;
    expect(
      (await write(A.fe, { model, waiting_requests_threshold: 3 }, { 'if-match': `W/${now}` }))
        .status,
    ).toBe(412);
    const malformed = await write(
      A.fe,
      { model, waiting_requests_threshold: 3 },
      { 'if-match': 'abc' },
    );
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ type: 'invalid_request_error', code: 400 });
    expect(await auditRows(model)).toBe(2);
    expect(
      (await write(A.fe, { model, waiting_requests_threshold: 4 }, { 'if-match': '*' })).status,
    ).toBe(200);

    // `*`: only a model that was changed before; a new one gets no row at all.
    const fresh = await write(
      A.fe,
      { model: 'list/fresh', waiting_requests_threshold: 1 },
      { 'if-match': '*' },
    );
    expect(fresh.status).toBe(412);
    expect(await sql('SELECT 1 FROM model_thresholds WHERE model = $1', ['list/fresh'])).toEqual(
      [],
    );
  });

  it('lets exactly one of two replicas win when both write with the same If-Match at once', async () => {
    const model = 'race/model';
    let tag = etag(await write(A.fe, { model, waiting_requests_threshold: 0 })) as string;
    for (let round = 1; round <= 5; round++) {
      // Both replicas serve the same state, so either could have handed out this ETag.
      await waitFor(
        async () => etag(await read(A.fe, model)) === tag && etag(await read(B.fe, model)) === tag,
        `both replicas at ${tag}`,
        DEADLINE_MS,
      );
      const rows = await auditRows(model);
      const [a, b] = await Promise.all([
        write(A.fe, { model, waiting_requests_threshold: round }, { 'if-match': tag }),
        write(B.fe, { model, active_decode_blocks_threshold: round / 10 }, { 'if-match': tag }),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 412]);
      expect(await auditRows(model)).toBe(rows + 1);
      tag = etag(a.status === 200 ? a : b) as string;
    }
  });

  it('reverts a temporary change exactly once, as system/ttl-expiry, and both replicas serve the values from before', async () => {
    const model = 'ttl/model';
    await write(A.fe, { model, active_decode_blocks_threshold: 0.8 });
    const temp = await write(B.fe, {
      model,
      active_decode_blocks_threshold: 0.2,
      waiting_requests_threshold: 5,
      reason: 'incident 42: shed earlier',
      ttl_secs: 2,
    });
    expect(temp.status).toBe(200);
    expect(temp.json).toMatchObject({
      active_decode_blocks_threshold: 0.2,
      waiting_requests_threshold: 5,
    });
    const [written, lasting] = await audit(A.fe, model);
    expect(lasting).toMatchObject({ reason: null, expires_at: null });
    expect(written).toMatchObject({ actor: 'alice', reason: 'incident 42: shed earlier' });
    expect(Date.parse(written.expires_at ?? '') - Date.parse(written.at)).toBeGreaterThanOrEqual(
      1999,
    );
    expect(Date.parse(written.expires_at ?? '') - Date.parse(written.at)).toBeLessThanOrEqual(2001);

    const before = { active_decode_blocks_threshold: 0.8, waiting_requests_threshold: null };
    for (const fe of [A.fe, B.fe]) {
      await waitFor(() => serves(fe, model, before), `${fe.url} reverted`, DEADLINE_MS);
    }
    const [revert] = await audit(B.fe, model);
    expect(revert).toEqual({
      id: expect.any(String),
      at: expect.any(String),
      actor: 'system',
      model,
      before: written.after,
      after: lasting.after,
      source: 'ttl-expiry',
      reason: `expiry of the temporary change ${written.id}`,
      expires_at: null,
    });
    for (const fe of [A.fe, B.fe]) {
      expect(etag(await read(fe, model))).toBe(`"${revert.id}"`);
    }
    // Both replicas keep polling: give a second revert every chance to happen.
    await new Promise((r) => setTimeout(r, 2000));
    expect(await expiryRows(model)).toBe(1);
    expect(await auditRows(model)).toBe(3);
  });

  it('keeps the value of a key written again for good, and still reverts the keys it did not set', async () => {
    const model = 'supersede/model';
    await write(A.fe, { model, active_decode_blocks_threshold: 0.9 });
    await write(A.fe, {
      model,
      active_decode_blocks_threshold: 0.3,
      waiting_requests_threshold: 2,
      ttl_secs: 1,
    });
    await write(B.fe, { model, waiting_requests_threshold: 7 });
    const expected = { active_decode_blocks_threshold: 0.9, waiting_requests_threshold: 7 };
    for (const fe of [A.fe, B.fe]) {
      await waitFor(
        () => serves(fe, model, expected),
        `${fe.url} reverted decode only`,
        DEADLINE_MS,
      );
    }
    expect(await expiryRows(model)).toBe(1);
  });

  it.each([
    ['a 513-character reason', { reason: 'r'.repeat(513) }],
    ['a reason that is no string', { reason: 42 }],
    ['ttl_secs 0', { ttl_secs: 0 }],
    ['ttl_secs past a week', { ttl_secs: 604801 }],
    ['fractional ttl_secs', { ttl_secs: 1.5 }],
    ['ttl_secs as a string', { ttl_secs: '60' }],
  ])('answers 400 and changes nothing for %s', async (_name, fields) => {
    const model = 'bad/model';
    const rows = await auditRows(model);
    const before = await read(A.fe, model);
    const res = await write(A.fe, { model, active_decode_blocks_threshold: 0.5, ...fields });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ type: 'invalid_request_error', code: 400 });
    expect(await auditRows(model)).toBe(rows);
    const after = await read(A.fe, model);
    expect([after.json, etag(after)]).toEqual([before.json, etag(before)]);
  });

  it('answers 400 for a reason or ttl_secs without a threshold to change', async () => {
    const res = await write(A.fe, { model: 'bad/model', reason: 'why', ttl_secs: 60 });
    expect(res.status).toBe(400);
    expect((res.json as { message: string }).message).toMatch(/need a threshold key/);
  });

  it('documents ETag, If-Match, 412, reason, ttl_secs and the audit fields in OpenAPI', async () => {
    const doc = (await (await fetch(`${A.fe.url}/docs-json`)).json()) as {
      paths: Record<string, { post?: Record<string, unknown> }>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const op = doc.paths['/busy_threshold'].post as {
      parameters: Array<{ name: string; in: string }>;
      responses: Record<string, { headers?: Record<string, unknown> }>;
    };
    expect(op.parameters).toContainEqual(
      expect.objectContaining({ name: 'If-Match', in: 'header' }),
    );
    expect(Object.keys(op.responses['200'].headers ?? {})).toEqual(['ETag']);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '412']));
    const { schemas } = doc.components;
    expect(schemas.SetThresholdDto.properties).toMatchObject({
      reason: { type: 'string', maxLength: 512 },
      ttl_secs: { type: 'number', minimum: 1, maximum: 604800 },
    });
    expect(Object.keys(schemas.SetThresholdDto.properties ?? {}).slice(-2)).toEqual([
      'reason',
      'ttl_secs',
    ]);
    expect(schemas.AuditEntryDto.properties).toMatchObject({
      reason: { type: 'string', nullable: true },
      expires_at: { type: 'string', nullable: true },
    });
  });

  // Last: it restarts both replicas.
  it(
    'reverts a change that expired while every replica was down, once they are back',
    async () => {
      const model = 'restart/model';
      await write(A.fe, { model, waiting_requests_threshold: 10 });
      const temp = await write(A.fe, { model, waiting_requests_threshold: 1, ttl_secs: 2 });
      expect(temp.status).toBe(200);
      await Promise.all([A.fe.proc.stop('SIGKILL'), B.fe.proc.stop('SIGKILL')]);
      expect(await expiryRows(model)).toBe(0); // nobody reverted it before going down
      await waitFor(
        async () =>
          (
            await sql<{ due: boolean }>(
              'SELECT revert_at <= clock_timestamp() AS due FROM model_thresholds WHERE model = $1',
              [model],
            )
          )[0].due,
        'the expiry, with every replica down',
        DEADLINE_MS,
      );
      expect(await expiryRows(model)).toBe(0);

      [A.fe, B.fe] = await Promise.all([
        startFrontend(replicaFlags(), A.namespace),
        startFrontend(replicaFlags(), A.namespace),
      ]);
      A.group.add(A.fe.proc);
      B.group.add(B.fe.proc);
      for (const fe of [A.fe, B.fe]) {
        await waitFor(
          () => serves(fe, model, { waiting_requests_threshold: 10 }),
          `${fe.url} reverted after the restart`,
          DEADLINE_MS,
        );
      }
      await new Promise((r) => setTimeout(r, 2000));
      expect(await expiryRows(model)).toBe(1);
    },
    PROCESS_TEST_MS,
  );
});

/** `npm start`: the embedded database (PGlite) and the in-process bus, no NATS. */
describe('safer threshold changes in the embedded system', () => {
  const group = new ProcessGroup();
  // A copy of the run's migrated embedded database (`storeDataDir`): these tests are about
  // changes and restarts, not a first start (embedded.e2e-spec.ts).
  let dataDir: string;
  const start = () =>
    startEmbedded({ flags: ['--data-dir', dataDir], env: { SLUICE_EMBEDDED_WORKERS: '0' }, group });
  /** One system for both tests, each on a model of its own; the second restarts it. */
  let sys: Started;
  beforeAll(async () => {
    dataDir = storeDataDir();
    sys = await start();
  }, PROCESS_TEST_MS);
  afterAll(async () => {
    // A clean stop, however long the exit takes on a busy machine.
    await sys?.proc.stop('SIGTERM', DEADLINE_MS);
    await group.stopAll();
  }, PROCESS_TEST_MS);

  it('answers with an ETag, refuses a stale If-Match, and reverts a temporary change once', async () => {
    const model = 'embedded/ttl';
    const set = await post(`${sys.url}/busy_threshold`, {
      model,
      active_prefill_tokens_threshold: 100,
    });
    expect(etag(set)).toMatch(STRONG_ETAG);
    const temp = await post(
      `${sys.url}/busy_threshold`,
      { model, active_prefill_tokens_threshold: 5, reason: 'try', ttl_secs: 1 },
      { 'if-match': etag(set) as string },
    );
    expect(temp.status).toBe(200);
    const stale = await post(
      `${sys.url}/busy_threshold`,
      { model, active_prefill_tokens_threshold: 6 },
      { 'if-match': etag(set) as string },
    );
    expect(stale.status).toBe(412);
    await waitFor(
      () => serves(sys, model, { active_prefill_tokens_threshold: 100 }),
      'reverted',
      DEADLINE_MS,
    );
    const entries = await audit(sys, model);
    expect(entries.map((e) => [e.actor, e.source, e.reason])).toEqual([
      ['system', 'ttl-expiry', `expiry of the temporary change ${entries[1].id}`],
      ['anonymous', expect.any(String), 'try'],
      ['anonymous', expect.any(String), null],
    ]);
  });

  it(
    'reverts a change that expired while it was stopped, once it is started again',
    async () => {
      const model = 'embedded/restart';
      const temp = await post(`${sys.url}/busy_threshold`, {
        model,
        waiting_requests_threshold: 3,
        ttl_secs: 2,
      });
      expect(temp.status).toBe(200);
      const expiresAt = Date.parse((await audit(sys, model))[0].expires_at ?? '');
      // A clean stop (SIGTERM), however long the exit takes on a busy machine.
      expect(await sys.proc.stop('SIGTERM', DEADLINE_MS)).toBe(0);
      const stoppedAt = Date.now();
      await waitFor(
        () => Date.now() > expiresAt,
        'the expiry, with the system stopped',
        DEADLINE_MS,
      );
      sys = await start();
      await waitFor(
        () => serves(sys, model, { waiting_requests_threshold: null }),
        'reverted',
        DEADLINE_MS,
      );
      const entries = await audit(sys, model);
      expect(entries.map((e) => e.source)).toEqual(['ttl-expiry', expect.any(String)]);
      // Reverted by the process started again, not by the one that was stopping.
      expect(Date.parse(entries[0].at)).toBeGreaterThan(stoppedAt);
    },
    PROCESS_TEST_MS,
  );
});
