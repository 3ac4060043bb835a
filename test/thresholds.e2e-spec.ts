import { kvReport } from '@sluice/testkit';
import { MODEL, ReportFields } from './support/bus';
import { queryRows } from './support/database';
import { useSystem } from './support/fixtures';
import { chat, metricValue, OVERLOAD_BODY, post } from './support/http';
import { FrontendProcess, startFrontend, storeDataDir, waitFor } from './support/processes';
import { TcpProxy } from './support/tcp-proxy';

const ALICE = 'alice:alice-secret-token';
const BOB = 'bob:bob-secret-token-2';
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const asAlice = auth('alice-secret-token');
/** Generous: how soon a change propagates is the bench's business; here only that it does. */
const DEADLINE_MS = 30_000;

interface Entry {
  model: string;
  active_decode_blocks_threshold: number | null;
  active_prefill_tokens_threshold: number | null;
  active_prefill_tokens_threshold_frac: number | null;
  waiting_requests_threshold: number | null;
  admission_control: string | null;
  ttft_slo_ms: number | null;
}
interface AuditEntry {
  id: string;
  at: string;
  actor: string;
  model: string;
  before: Record<string, number | string | null>;
  after: Record<string, number | string | null>;
  source: string;
}

/**
 * docs/api.md#busy-thresholds end to end: two frontend replicas sharing a real PostgreSQL database (behind a
 * TCP relay the test can cut) and real NATS, with a real simulated worker behind them.
 */
describe('busy thresholds as managed configuration (PostgreSQL, two replicas)', () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    proxy = await TcpProxy.start(5432);
  });
  afterAll(() => proxy?.close());
  const replicaFlags = (): string[] => [
    ...['--database-url', A.db.url(proxy.port)],
    ...['--admin-token', ALICE, '--admin-token', BOB],
    ...['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.9'],
  ];
  const A = useSystem({ database: 'thresholds', bus: true, workers: [[]], frontend: replicaFlags });
  const B = useSystem({ namespace: A.namespace, frontend: replicaFlags });
  const namespace = A.namespace;
  const read = async (fe: FrontendProcess, model = MODEL): Promise<Entry> =>
    (await post(`${fe.url}/busy_threshold`, { model })).json as Entry;
  const audit = async (
    fe: FrontendProcess,
    query = '',
  ): Promise<{ entries: AuditEntry[]; next: string | null }> =>
    (await (await fetch(`${fe.url}/busy_threshold/audit${query}`)).json()) as {
      entries: AuditEntry[];
      next: string | null;
    };
  const auditRows = async (): Promise<number> =>
    Number(
      (await queryRows<{ n: string }>(A.db.url(), 'SELECT count(*) AS n FROM threshold_audit'))[0]
        .n,
    );

  beforeAll(async () => {
    A.bus.report(namespace, {
      worker_id: 'thr-w',
      endpoint: A.worker.url,
      active_decode_blocks: 60,
    });
    await waitFor(async () => (await chat(B.fe.url)).status === 200, 'worker known to B');
  });

  it('reads, sets, merges and clears back to the global default', async () => {
    expect(await read(A.fe)).toEqual({
      model: MODEL,
      active_decode_blocks_threshold: 0.9,
      active_prefill_tokens_threshold: null,
      active_prefill_tokens_threshold_frac: null,
      waiting_requests_threshold: null,
      admission_control: 'token-capacity',
      ttft_slo_ms: null,
    });
    const set = await post(
      `${A.fe.url}/busy_threshold`,
      { model: MODEL, active_prefill_tokens_threshold: 5000 },
      asAlice,
    );
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({
      active_decode_blocks_threshold: 0.9,
      active_prefill_tokens_threshold: 5000,
    });
    const merged = await post(
      `${A.fe.url}/busy_threshold`,
      { model: MODEL, active_prefill_tokens_threshold_frac: 1.5 },
      asAlice,
    );
    expect(merged.json).toMatchObject({
      active_prefill_tokens_threshold: 5000,
      active_prefill_tokens_threshold_frac: 1.5,
    });
    const cleared = await post(
      `${A.fe.url}/busy_threshold`,
      {
        model: MODEL,
        active_prefill_tokens_threshold: null,
        active_prefill_tokens_threshold_frac: null,
      },
      asAlice,
    );
    expect(cleared.json).toEqual({
      model: MODEL,
      active_decode_blocks_threshold: 0.9,
      active_prefill_tokens_threshold: null,
      active_prefill_tokens_threshold_frac: null,
      waiting_requests_threshold: null,
      admission_control: 'token-capacity',
      ttft_slo_ms: null,
    });
    const list = (await (await fetch(`${A.fe.url}/busy_threshold`)).json()) as {
      thresholds: Entry[];
    };
    expect(list.thresholds.find((t) => t.model === MODEL)).toEqual(cleared.json);
  });

  it('sets, stores, audits (every key), lists and clears a per-model waiting_requests_threshold', async () => {
    const model = 'waiting/model';
    const set = await post(
      `${A.fe.url}/busy_threshold`,
      { model, waiting_requests_threshold: 3 },
      asAlice,
    );
    expect(set.status).toBe(200);
    expect(set.json).toEqual({
      model,
      active_decode_blocks_threshold: 0.9,
      active_prefill_tokens_threshold: null,
      active_prefill_tokens_threshold_frac: null,
      waiting_requests_threshold: 3,
      admission_control: 'token-capacity',
      ttft_slo_ms: null,
    });
    const stored = await queryRows<{ v: string }>(
      A.db.url(),
      'SELECT waiting_requests_threshold AS v FROM model_thresholds WHERE model = $1',
      [model],
    );
    expect(stored.map((r) => Number(r.v))).toEqual([3]);
    await waitFor(
      async () => (await read(B.fe, model)).waiting_requests_threshold === 3,
      'replica B has the value',
    );
    const listed = (await (await fetch(`${B.fe.url}/busy_threshold`)).json()) as {
      thresholds: Entry[];
    };
    expect(listed.thresholds.find((t) => t.model === model)).toEqual(set.json);

    const cleared = await post(
      `${A.fe.url}/busy_threshold`,
      { model, waiting_requests_threshold: null },
      asAlice,
    );
    expect(cleared.status).toBe(200);
    expect((cleared.json as Entry).waiting_requests_threshold).toBeNull();

    const page = await audit(A.fe, '?model=waiting%2Fmodel');
    const none = {
      active_decode_blocks_threshold: null,
      active_prefill_tokens_threshold: null,
      active_prefill_tokens_threshold_frac: null,
      waiting_requests_threshold: null,
      admission_control: null,
      ttft_slo_ms: null,
    };
    expect(page.entries.map((e) => [e.actor, e.before, e.after])).toEqual([
      ['alice', { ...none, waiting_requests_threshold: 3 }, none],
      ['alice', none, { ...none, waiting_requests_threshold: 3 }],
    ]);
  });

  it('sets, stores, audits, syncs and clears a per-model ttft_slo_ms', async () => {
    const model = 'slo/model';
    const set = await post(`${A.fe.url}/busy_threshold`, { model, ttft_slo_ms: 500 }, asAlice);
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({
      model,
      ttft_slo_ms: 500,
      admission_control: 'token-capacity',
    });
    const stored = await queryRows<{ v: string }>(
      A.db.url(),
      'SELECT ttft_slo_ms AS v FROM model_thresholds WHERE model = $1',
      [model],
    );
    expect(stored.map((r) => Number(r.v))).toEqual([500]);
    await waitFor(
      async () => (await read(B.fe, model)).ttft_slo_ms === 500,
      'replica B has the objective',
    );
    const cleared = await post(`${A.fe.url}/busy_threshold`, { model, ttft_slo_ms: null }, asAlice);
    expect((cleared.json as Entry).ttft_slo_ms).toBeNull();
    const page = await audit(A.fe, '?model=slo%2Fmodel');
    expect(page.entries.map((e) => [e.before.ttft_slo_ms, e.after.ttft_slo_ms])).toEqual([
      [500, null],
      [null, 500],
    ]);
  });

  it.each([
    ['decode 1.5', { model: MODEL, active_decode_blocks_threshold: 1.5 }],
    ['negative waiting', { model: MODEL, waiting_requests_threshold: -1 }],
    ['fractional waiting', { model: MODEL, waiting_requests_threshold: 1.5 }],
    ['waiting as string', { model: MODEL, waiting_requests_threshold: '3' }],
    ['negative tokens', { model: MODEL, active_prefill_tokens_threshold: -1 }],
    ['fractional tokens', { model: MODEL, active_prefill_tokens_threshold: 2.5 }],
    ['negative frac', { model: MODEL, active_prefill_tokens_threshold_frac: -0.5 }],
    ['number as string', { model: MODEL, active_decode_blocks_threshold: '0.5' }],
    ['missing model', { active_decode_blocks_threshold: 0.5 }],
    ['unknown key', { model: MODEL, active_decode_blocks_threshold: 0.5, surprise: 1 }],
    ['objective 0', { model: MODEL, ttft_slo_ms: 0 }],
    ['fractional objective', { model: MODEL, ttft_slo_ms: 250.5 }],
    ['objective as string', { model: MODEL, ttft_slo_ms: '500' }],
    ['300-char model', { model: 'm'.repeat(300), active_decode_blocks_threshold: 0.5 }],
  ])('answers 400 and changes nothing for %s', async (_name, body) => {
    const before = { entry: await read(A.fe), rows: await auditRows() };
    const res = await post(`${A.fe.url}/busy_threshold`, body, asAlice);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ type: 'invalid_request_error', code: 400 });
    expect(await read(A.fe)).toEqual(before.entry);
    expect(await auditRows()).toBe(before.rows);
  });

  it('needs a bearer token to write: 401 without, 403 wrong, 200 with the actor recorded', async () => {
    const body = { model: 'auth/model', active_decode_blocks_threshold: 0.7 };
    expect((await post(`${A.fe.url}/busy_threshold`, body)).status).toBe(401);
    expect((await post(`${A.fe.url}/busy_threshold`, body, auth('not-a-token'))).status).toBe(403);
    expect((await post(`${A.fe.url}/busy_threshold`, { model: 'auth/model' })).status).toBe(200); // a read
    const ok = await post(`${A.fe.url}/busy_threshold`, body, auth('bob-secret-token-2'));
    expect(ok.status).toBe(200);
    const page = await audit(A.fe, '?model=auth%2Fmodel');
    expect(page.entries).toHaveLength(1);
    expect(page.entries[0]).toMatchObject({
      actor: 'bob',
      model: 'auth/model',
    });
    expect(page.entries[0].before).toEqual({
      active_decode_blocks_threshold: null,
      active_prefill_tokens_threshold: null,
      active_prefill_tokens_threshold_frac: null,
      waiting_requests_threshold: null,
      admission_control: null,
      ttft_slo_ms: null,
    });
    expect(page.entries[0].after).toEqual({
      active_decode_blocks_threshold: 0.7,
      active_prefill_tokens_threshold: null,
      active_prefill_tokens_threshold_frac: null,
      waiting_requests_threshold: null,
      admission_control: null,
      ttft_slo_ms: null,
    });
    expect(page.entries[0].source).toMatch(/127\.0\.0\.1/);
    expect(Number.isNaN(Date.parse(page.entries[0].at))).toBe(false);
  });

  it('writes one audit row per change, newest first, paginated without loss or duplicates', async () => {
    const model = 'audit/model';
    for (let k = 1; k <= 7; k++) {
      expect(
        (
          await post(
            `${A.fe.url}/busy_threshold`,
            { model, active_prefill_tokens_threshold: k },
            asAlice,
          )
        ).status,
      ).toBe(200);
    }
    const seen: AuditEntry[] = [];
    let cursor: string | null = null;
    do {
      const page = await audit(
        B.fe,
        `?model=audit%2Fmodel&limit=3${cursor ? `&before=${cursor}` : ''}`,
      );
      expect(page.entries.length).toBeLessThanOrEqual(3);
      seen.push(...page.entries);
      cursor = page.next;
    } while (cursor);
    expect(seen.map((e) => e.after.active_prefill_tokens_threshold)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(new Set(seen.map((e) => e.id)).size).toBe(7);
  });

  it('applies a change made on replica A on replica B (B starts rejecting)', async () => {
    A.bus.report(namespace, {
      worker_id: 'thr-w',
      endpoint: A.worker.url,
      active_decode_blocks: 60,
    });
    await waitFor(async () => (await chat(B.fe.url)).status === 200, 'B admits at 0.6 < 0.9');
    await post(
      `${A.fe.url}/busy_threshold`,
      { model: MODEL, active_decode_blocks_threshold: 0.5 },
      asAlice,
    );
    await waitFor(async () => (await chat(B.fe.url)).status === 503, 'B rejects', DEADLINE_MS);
    await post(
      `${A.fe.url}/busy_threshold`,
      { model: MODEL, active_decode_blocks_threshold: null },
      asAlice,
    );
    await waitFor(async () => (await chat(B.fe.url)).status === 200, 'B admits again', DEADLINE_MS);
  });

  it('leaves 50 audit rows and the newest row’s state after 50 concurrent writes', async () => {
    const model = 'race/model';
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        post(
          `${(i % 2 ? A.fe : B.fe).url}/busy_threshold`,
          { model, active_prefill_tokens_threshold: i + 1 },
          asAlice,
        ),
      ),
    );
    expect(replies.every((r) => r.status === 200)).toBe(true);
    const rows = await queryRows<{ after: Entry }>(
      A.db.url(),
      'SELECT "after" FROM threshold_audit WHERE model = $1 ORDER BY id DESC',
      [model],
    );
    expect(rows).toHaveLength(50);
    const stored = await queryRows<{ v: string }>(
      A.db.url(),
      'SELECT active_prefill_tokens_threshold AS v FROM model_thresholds WHERE model = $1',
      [model],
    );
    expect(Number(stored[0].v)).toBe(rows[0].after.active_prefill_tokens_threshold);
    await waitFor(
      async () =>
        (await read(B.fe, model)).active_prefill_tokens_threshold ===
        rows[0].after.active_prefill_tokens_threshold,
      'B in step',
    );
    expect((await read(A.fe, model)).active_prefill_tokens_threshold).toBe(
      rows[0].after.active_prefill_tokens_threshold,
    );
  });

  it('keeps admitting and refuses writes cleanly while PostgreSQL is away, then recovers', async () => {
    const model = 'outage/model';
    const rowsBefore = await auditRows();
    proxy.cut();
    try {
      const res = await post(
        `${A.fe.url}/busy_threshold`,
        { model, active_decode_blocks_threshold: 0.3 },
        asAlice,
      );
      expect(res.status).toBe(503);
      expect(res.json).toMatchObject({ type: 'service_unavailable', code: 503 });
      expect((res.json as { message: string }).message).toMatch(/nothing was changed/);
      expect((await read(A.fe, model)).active_decode_blocks_threshold).toBe(0.9); // reads from memory
      expect((await chat(A.fe.url)).status).toBe(200); // admission unaffected
      expect((await fetch(`${A.fe.url}/health`)).status).toBe(503);
    } finally {
      proxy.restore();
    }
    expect(await auditRows()).toBe(rowsBefore);
    expect(
      await queryRows(A.db.url(), 'SELECT 1 FROM model_thresholds WHERE model = $1', [model]),
    ).toHaveLength(0);
    await waitFor(
      async () =>
        (
          await post(
            `${A.fe.url}/busy_threshold`,
            { model, active_decode_blocks_threshold: 0.3 },
            asAlice,
          )
        ).status === 200,
      'writes recover',
    );
    expect(await auditRows()).toBe(rowsBefore + 1);
  });

  it('keeps stored values across a restart', async () => {
    await post(
      `${A.fe.url}/busy_threshold`,
      { model: 'durable/model', active_decode_blocks_threshold: 0.42 },
      asAlice,
    );
    await A.fe.proc.stop();
    A.fe = await startFrontend(replicaFlags(), namespace);
    A.group.add(A.fe.proc);
    expect((await read(A.fe, 'durable/model')).active_decode_blocks_threshold).toBe(0.42);
  });

  it('documents the admin routes in OpenAPI', async () => {
    const doc = (await (await fetch(`${A.fe.url}/docs-json`)).json()) as {
      paths: Record<string, unknown>;
      components: {
        schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }>;
      };
    };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/busy_threshold', '/busy_threshold/audit']),
    );
    const { schemas } = doc.components;
    const keys = [
      'active_decode_blocks_threshold',
      'active_prefill_tokens_threshold',
      'active_prefill_tokens_threshold_frac',
      'waiting_requests_threshold',
      'admission_control',
      'ttft_slo_ms',
    ];
    // The threshold fields are generated from one table; the document must read as hand-written.
    expect(Object.keys(schemas.SetThresholdDto.properties ?? {})).toEqual([
      'model',
      ...keys,
      'reason',
      'ttl_secs',
    ]);
    expect(schemas.SetThresholdDto.required).toEqual(['model']);
    expect(Object.keys(schemas.ThresholdValuesDto.properties ?? {})).toEqual(keys);
    expect(schemas.ThresholdValuesDto.required).toEqual(keys);
    expect(Object.keys(schemas.ThresholdEntryDto.properties ?? {})).toEqual([...keys, 'model']);
    const decode = { type: 'number', nullable: true, minimum: 0, maximum: 1, example: 0.85 };
    expect(schemas.SetThresholdDto.properties).toMatchObject({
      active_decode_blocks_threshold: decode,
      active_prefill_tokens_threshold: {
        type: 'number',
        nullable: true,
        minimum: 0,
        example: 4096,
      },
      waiting_requests_threshold: { type: 'number', nullable: true, minimum: 0, example: 8 },
      admission_control: {
        type: 'string',
        enum: ['token-capacity', 'shadow', 'none'],
        nullable: true,
        example: 'shadow',
      },
      ttft_slo_ms: { type: 'number', nullable: true, minimum: 1, example: 500 },
    });
    expect(schemas.ThresholdValuesDto.properties).toMatchObject({
      active_decode_blocks_threshold: decode,
      active_prefill_tokens_threshold_frac: { type: 'number', nullable: true, example: null },
      admission_control: { type: 'string', nullable: true, example: 'token-capacity' },
    });
    expect((await fetch(`${A.fe.url}/docs`)).status).toBe(200);
  });
});

describe('busy thresholds with the embedded database', () => {
  it('keeps stored values across a restart of the embedded system, and accepts loopback writes as anonymous', async () => {
    // A copy of the run's migrated embedded database: what is judged is the restart.
    const dataDir = storeDataDir();
    const start = () => startFrontend(['--data-dir', dataDir]);
    let fe = await start();
    try {
      const res = await post(`${fe.url}/busy_threshold`, {
        model: 'embedded/model',
        active_prefill_tokens_threshold: 123,
        waiting_requests_threshold: 7,
      });
      expect(res.status).toBe(200);
      const page = (await (await fetch(`${fe.url}/busy_threshold/audit`)).json()) as {
        entries: AuditEntry[];
      };
      expect(page.entries[0]).toMatchObject({ actor: 'anonymous', model: 'embedded/model' });
      await fe.proc.stop();
      fe = await start();
      expect(
        (await post(`${fe.url}/busy_threshold`, { model: 'embedded/model' })).json,
      ).toMatchObject({
        active_prefill_tokens_threshold: 123,
        waiting_requests_threshold: 7,
      });
    } finally {
      await fe.proc.stop();
    }
  });
});

/**
 * docs/architecture.md#busy-rule's fourth threshold on the request path: a real frontend process, real NATS, real
 * simulated workers; the test publishes each worker's num_requests_waiting.
 */
describe('waiting_requests_threshold applied to admission (real NATS)', () => {
  const sys = useSystem({
    bus: true,
    workers: [[], []],
    frontend: ['--admission-control', 'token-capacity', '--waiting-requests-threshold', '2'],
  });

  /** Publishes a report with `waiting` requests queued (none: the field is left out). */
  async function report(i: number, waiting: number | undefined): Promise<void> {
    const fields: ReportFields = { worker_id: `wait-${i}`, endpoint: sys.workers[i].url };
    sys.bus.raw(sys.fe.namespace, 'kv_metrics', {
      ...kvReport(fields),
      ...(waiting === undefined ? {} : { num_requests_waiting: waiting }),
    });
    const worker = { worker_id: fields.worker_id };
    await waitFor(async () => {
      const known = await metricValue(sys.fe.url, 'dynamo_frontend_worker_busy', worker);
      const shown = await metricValue(sys.fe.url, 'sluice_frontend_worker_requests_waiting', {
        ...worker,
        dp_rank: '0',
      });
      return known !== undefined && shown === waiting;
    }, `report of wait-${i} with ${waiting} waiting applied`);
  }

  it('says so in the startup line', () => {
    expect(sys.fe.proc.output).toMatch(
      /busy-worker rejection ENABLED .*active_prefill_tokens_threshold_frac=unset waiting_requests_threshold=2/,
    );
  });

  it('answers the overload 503 when every worker has 3 waiting, admits again when one has 2', async () => {
    await report(0, 2);
    await report(1, 2);
    expect((await chat(sys.fe.url)).status).toBe(200); // 2 is not over 2

    await report(0, 3);
    await report(1, 3);
    const rejected = await chat(sys.fe.url);
    expect(rejected.status).toBe(503);
    expect(rejected.text).toBe(OVERLOAD_BODY);
    expect(rejected.headers.get('retry-after')).toBe('1');

    await report(1, 2);
    const served = new Set<string | null>();
    for (let i = 0; i < 4; i++) {
      const res = await chat(sys.fe.url);
      expect(res.status).toBe(200);
      served.add(res.headers.get('x-sluice-worker-id'));
    }
    expect([...served]).toEqual(['wait-1']); // the busy one receives nothing
  });

  it('never fires for a worker that does not report num_requests_waiting', async () => {
    await report(0, 50);
    await report(1, undefined);
    expect((await chat(sys.fe.url)).status).toBe(200);
  });

  it('applies a per-model value set over the API to the very next request', async () => {
    await report(0, 3);
    await report(1, 3);
    expect((await chat(sys.fe.url)).status).toBe(503);
    const raised = await post(`${sys.fe.url}/busy_threshold`, {
      model: MODEL,
      waiting_requests_threshold: 3,
    });
    expect(raised.status).toBe(200);
    expect((await chat(sys.fe.url)).status).toBe(200);
    await post(`${sys.fe.url}/busy_threshold`, { model: MODEL, waiting_requests_threshold: null });
    expect((await chat(sys.fe.url)).status).toBe(503);
  });
});
