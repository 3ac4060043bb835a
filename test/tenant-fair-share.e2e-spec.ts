import { MODEL, ReportFields } from './support/bus';
import { useSystem } from './support/fixtures';
import { metricValue, openStream, request } from './support/http';
import { Heartbeat } from './support/nats-server';
import { FrontendProcess, NATS_URL, waitFor } from './support/processes';
import { chatWith, tenantWithKey } from './support/tenants';

/** Waits on a busy 2-core machine are generous; speed is measured by the bench, not here. */
const WAIT_MS = 30_000;
const TOKEN = 'fair-share-admin-token-1';
const asOps = { authorization: `Bearer ${TOKEN}` };
const DEPTH = 12;

const admin = (fe: FrontendProcess, path: string, method: string, body?: unknown) =>
  request(`${fe.url}/tenants${path}`, method, body, asOps);

const chat = (fe: FrontendProcess, key: string) => chatWith(fe, key, 4, 'Hello');

/**
 * docs/api.md#tenants, fair share (issue 43 item 3): tenants `a` (weight 3) and `b` (weight 1)
 * with keys, one real simulated worker (slowed down so that a long stream holds it while requests
 * queue), the router queue with a threshold of 0 (a request waits while the worker has any prompt
 * token in flight from this frontend, so the queue dispatches one request at a time and the order
 * of the answers is the order of dispatch).
 */
describe('the router queue shares a busy worker between tenants by weight', () => {
  const sys = useSystem({
    database: 'tenant_fair_share',
    workers: [['--speedup', '0.1']],
    frontend: [
      ...['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.8'],
      ...['--router-queue-threshold', '0', '--router-queue-timeout-ms', '120000'],
      ...['--router-queue-max-depth', String(DEPTH), '--admin-token', `ops:${TOKEN}`],
    ],
  });
  let beat: Heartbeat;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    beat = await Heartbeat.start(NATS_URL, sys.namespace);
    // The simulated worker's real KV size, never busy by load: only the queue holds requests.
    const report: ReportFields = {
      worker_id: 'w',
      endpoint: sys.worker.url,
      active_decode_blocks: 0,
      kv_total_blocks: 16384,
      max_num_batched_tokens: 8192,
    };
    beat.set(report);
    await waitFor(
      async () =>
        (await metricValue(sys.fe.url, 'dynamo_frontend_worker_active_decode_blocks', {
          worker_id: 'w',
        })) === 0,
      'worker reported',
      WAIT_MS,
    );
    for (const [id, weight] of [
      ['a', 3],
      ['b', 1],
    ] as const) {
      keys[id] = await tenantWithKey(sys.fe, TOKEN, id, { weight });
      await waitFor(async () => (await chat(sys.fe, keys[id])).status === 200, `${id} admitted`);
    }
  });
  afterAll(() => beat?.close());

  const queued = async () =>
    (await metricValue(sys.fe.url, 'dynamo_frontend_queued_requests', { model: MODEL })) ?? 0;

  /** Holds the worker with a long stream (cancelled by the test) so that requests queue. */
  async function hold(): Promise<AbortController> {
    const holder = new AbortController();
    expect((await openStream(sys.fe.url, 2000, holder.signal)).status).toBe(200);
    return holder;
  }

  /** Sends one request of each tenant in `order`, each queued before the next is sent. */
  async function enqueue(order: string[], done: string[], base = 0): Promise<Promise<void>[]> {
    const waiting: Promise<void>[] = [];
    for (const [i, tenant] of order.entries()) {
      waiting.push(chat(sys.fe, keys[tenant]).then((a) => void done.push(`${tenant} ${a.status}`)));
      await waitFor(
        async () => (await queued()) === base + i + 1,
        `${i + 1} queued`,
        WAIT_MS,
      ).catch((err: Error) => {
        // Which request was answered instead of queued, and how.
        throw new Error(`${err.message}; answered so far: [${done.join(', ')}]`);
      });
    }
    return waiting;
  }

  it('dispatches backlogged tenants 3:1, then what is left to the one still waiting', async () => {
    const holder = await hold();
    const done: string[] = [];
    // Every request of a arrives before any of b: first come, first served would serve a six times.
    const waiting = await enqueue([...Array(6).fill('a'), ...Array(6).fill('b')], done);
    expect(done).toEqual([]);
    holder.abort();
    await Promise.all(waiting);
    const order = done.map((d) => d.split(' ')[0]).join('');
    expect(done.every((d) => d.endsWith(' 200'))).toBe(true);
    // Six of a and two of b in the first eight (3:1); then b alone gets the worker.
    expect(order).toBe('abaaabaabbbb');
  });

  /** The tenant's requests by outcome: the counter, and `GET /tenants/{id}/usage`. */
  async function outcomes(tenant: string) {
    const counted = async (outcome: string) =>
      (await metricValue(sys.fe.url, 'sluice_frontend_tenant_requests_total', {
        tenant,
        outcome,
      })) ?? 0;
    const usage = (await admin(sys.fe, `/${tenant}/usage?window=1h`, 'GET')).json as {
      requests: { admitted: number; overloaded: number };
    };
    return {
      admitted: await counted('admitted'),
      overloaded: await counted('overloaded'),
      usage: usage.requests,
    };
  }

  it('a full queue refuses the newest request of the tenant furthest over its share', async () => {
    const before = { a: await outcomes('a'), b: await outcomes('b') };
    const holder = await hold();
    const done: string[] = [];
    const waiting = await enqueue(Array(DEPTH).fill('a'), done);
    // b has nothing waiting: a newest waiter gives up its place, b's request is queued.
    const b = chat(sys.fe, keys.b).then((a) => void done.push(`b ${a.status}`));
    await waitFor(() => Promise.resolve(done.length === 1), 'one of a refused', WAIT_MS);
    expect(done).toEqual(['a 503']);
    expect(await queued()).toBe(DEPTH);
    // a now over its share again: its next request is the one refused, with its reason.
    const refused = await chat(sys.fe, keys.a);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('x-sluice-reject-reason')).toBe('all_workers_busy');
    holder.abort();
    await Promise.all([...waiting, b]);
    expect(done.filter((d) => d === 'b 200')).toHaveLength(1);
    expect(done.filter((d) => d === 'a 200')).toHaveLength(DEPTH - 1);
    // The queue's refusals are a's `overloaded` requests, never `admitted` ones (docs/api.md).
    const after = { a: await outcomes('a'), b: await outcomes('b') };
    expect(after.a.admitted - before.a.admitted).toBe(DEPTH - 1);
    expect(after.a.overloaded - before.a.overloaded).toBe(2);
    expect(after.a.usage.admitted - before.a.usage.admitted).toBe(DEPTH - 1);
    expect(after.a.usage.overloaded - before.a.usage.overloaded).toBe(2);
    expect(after.b.admitted - before.b.admitted).toBe(1);
    expect(after.b.overloaded - before.b.overloaded).toBe(0);
  });
});
