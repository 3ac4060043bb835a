import { ProcessGroup } from '@sluice/testkit';
import { createMigratedDatabase, queryRows, TestDatabase } from './support/database';
import { NATS_URL } from './support/processes';
import * as testkit from '@sluice/testkit';

/** Enough models for several pages of the largest size and several pieces of the whole list. */
const MODELS = 2500;
const PROCESS_MS = 180_000;
const name = (i: number): string => `m-${String(i).padStart(5, '0')}`;

interface Entry {
  model: string;
  active_decode_blocks_threshold: number | null;
}
interface Page {
  thresholds: Entry[];
  next?: string | null;
}

/**
 * docs/api.md#busy-thresholds `GET /busy_threshold` with many models: pages (`limit`, `after`,
 * `next`) and the whole list, from a frontend that loaded them from real PostgreSQL.
 */
describe('GET /busy_threshold with many models (PostgreSQL)', () => {
  const group = new ProcessGroup();
  let db: TestDatabase;
  let url: string;

  const get = async (query: string): Promise<{ status: number; body: unknown; type: string }> => {
    const r = await fetch(`${url}/busy_threshold${query}`);
    return { status: r.status, body: await r.json(), type: r.headers.get('content-type') ?? '' };
  };

  beforeAll(async () => {
    db = await createMigratedDatabase('list', group);
    // Rows straight into the store's table: the frontend loads them at start, as after a restart.
    await queryRows(
      db.url(),
      `INSERT INTO model_thresholds (model, active_decode_blocks_threshold)
       SELECT 'm-' || lpad(i::text, 5, '0'), (i % 100) / 100.0 FROM generate_series(0, $1 - 1) i`,
      [MODELS],
    );
    const fe = await testkit.startFrontend({
      natsUrl: NATS_URL,
      group,
      flags: ['--database-url', db.url()],
    });
    url = fe.url;
  }, PROCESS_MS);

  afterAll(async () => {
    await group.stopAll();
    await db?.drop();
  });

  it('pages through every model in order, each once, with the cursor of the next page', async () => {
    const seen: string[] = [];
    let after: string | null | undefined;
    let pages = 0;
    do {
      const query = `?limit=1000${after ? `&after=${encodeURIComponent(after)}` : ''}`;
      const r = await get(query);
      expect(r.status).toBe(200);
      const page = r.body as Page;
      expect(page.thresholds.length).toBeLessThanOrEqual(1000);
      seen.push(...page.thresholds.map((e) => e.model));
      after = page.next;
      expect(after === null || after === seen[seen.length - 1]).toBe(true);
      pages++;
    } while (after);
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: MODELS }, (_, i) => name(i)));
  });

  it('answers a default page of 100 when only `after` is given', async () => {
    const r = await get(`?after=${name(99)}`);
    const page = r.body as Page;
    expect(page.thresholds.map((e) => e.model)).toEqual(
      Array.from({ length: 100 }, (_, i) => name(100 + i)),
    );
    expect(page.thresholds[0].active_decode_blocks_threshold).toBe(0);
    expect(page.next).toBe(name(199));
  });

  it('answers the whole list without `limit` and `after`, as before', async () => {
    const r = await get('');
    expect(r.status).toBe(200);
    expect(r.type).toMatch(/^application\/json/);
    const body = r.body as Page;
    expect(Object.keys(body)).toEqual(['thresholds']);
    expect(body.thresholds.map((e) => e.model)).toEqual(
      Array.from({ length: MODELS }, (_, i) => name(i)),
    );
    expect(body.thresholds[123]).toEqual({
      model: name(123),
      active_decode_blocks_threshold: 0.23,
      active_prefill_tokens_threshold: null,
      active_prefill_tokens_threshold_frac: null,
      waiting_requests_threshold: null,
      // The effective mode: the global flag's (`none` by default).
      admission_control: 'none',
      ttft_slo_ms: null,
    });
  });

  it.each([
    ['?limit=0', 'limit'],
    ['?limit=1001', 'limit'],
    ['?limit=ten', 'limit'],
    ['?limit=1.5', 'limit'],
    ['?after=', 'after'],
    [`?after=${'x'.repeat(257)}`, 'after'],
    ['?cursor=m-00001', 'cursor'],
  ])('refuses %s with a 400 naming the parameter', async (query, param) => {
    const r = await get(query);
    expect(r.status).toBe(400);
    const body = r.body as { type: string; message: string; details?: unknown };
    expect(body.type).toBe('invalid_request_error');
    expect(JSON.stringify(body)).toContain(param);
  });
});
