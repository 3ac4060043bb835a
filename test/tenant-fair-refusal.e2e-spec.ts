import { MODEL, ReportFields } from './support/bus';
import { useSystem } from './support/fixtures';
import { keepUnread, metricValue } from './support/http';
import { Heartbeat } from './support/nats-server';
import { FrontendProcess, NATS_URL, waitFor } from './support/processes';
import { chatWith, tenantWithKey } from './support/tenants';

/** Waits on a busy 2-core machine are generous; speed is measured by the bench, not here. */
const WAIT_MS = 30_000;
const TOKEN = 'fair-refusal-admin-token-1';

const chat = (fe: FrontendProcess, key: string) => chatWith(fe, key, 4, 'Hello');

/**
 * docs/api.md#tenants, fair share of refusals (issue 43 item 3): the default admission mode
 * (token-capacity, busy thresholds, no router queue threshold), tenants `a` and `b` of equal
 * weight, one real simulated worker (slowed down so that a long stream holds it) whose load the
 * test reports itself (busy or not). While the worker is busy, the heavy tenant `a`, which holds
 * two streams, is refused at once; a request of the light tenant `b`, which holds nothing, is
 * under its share: it goes to a worker not busy at the critical class's thresholds
 * (decision 0230) or, when there is none, waits for the worker to free and is served.
 */
describe('with every worker busy, a tenant under its fair share waits instead of being refused', () => {
  const sys = useSystem({
    database: 'tenant_fair_refusal',
    workers: [['--speedup', '0.1']],
    frontend: [
      ...['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.8'],
      ...['--router-queue-timeout-ms', '120000', '--admin-token', `ops:${TOKEN}`],
    ],
  });
  let beat: Heartbeat;
  const keys: Record<string, string> = {};
  const report = (activeDecodeBlocks: number): ReportFields => ({
    worker_id: 'w',
    endpoint: sys.worker.url,
    active_decode_blocks: activeDecodeBlocks,
    kv_total_blocks: 16384,
    max_num_batched_tokens: 8192,
  });
  const reported = (blocks: number) =>
    waitFor(
      async () =>
        (await metricValue(sys.fe.url, 'dynamo_frontend_worker_active_decode_blocks', {
          worker_id: 'w',
        })) === blocks,
      `worker reported ${blocks} blocks`,
      WAIT_MS,
    );

  beforeAll(async () => {
    beat = await Heartbeat.start(NATS_URL, sys.namespace);
    beat.set(report(0));
    await reported(0);
    for (const id of ['a', 'b']) {
      keys[id] = await tenantWithKey(sys.fe, TOKEN, id, { weight: 1 });
      await waitFor(async () => (await chat(sys.fe, keys[id])).status === 200, `${id} admitted`);
    }
  });
  afterAll(() => beat?.close());

  const queued = async () =>
    (await metricValue(sys.fe.url, 'dynamo_frontend_queued_requests', { model: MODEL })) ?? 0;

  /** A long stream of tenant `a`, held open until the test aborts it. */
  async function hold(signal: AbortSignal): Promise<void> {
    const res = await fetch(`${sys.fe.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${keys.a}` },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 2000,
        stream: true,
      }),
      signal,
    });
    expect(keepUnread(res, signal).status).toBe(200);
  }

  /**
   * Tenant `a` holds two long streams and the worker reports `blocks` in use; returns once `a` is
   * refused. Abort the controller returned to end the streams.
   */
  async function heavyAt(blocks: number): Promise<AbortController> {
    const holders = new AbortController();
    await hold(holders.signal);
    await hold(holders.signal);
    beat.set(report(blocks));
    await reported(blocks);
    await waitFor(async () => (await chat(sys.fe, keys.a)).status === 503, 'a refused', WAIT_MS);
    return holders;
  }

  it('refuses the heavy tenant at once and serves the light one when the worker frees', async () => {
    // The worker is busy for every class: a, over its share, is refused.
    const holders = await heavyAt(16000);
    const b = chat(sys.fe, keys.b);
    await waitFor(async () => (await queued()) === 1, 'b waits', WAIT_MS);
    // While b waits, a is still refused, with the busy workers' reason.
    const refused = await chat(sys.fe, keys.a);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('x-sluice-reject-reason')).toBe('all_workers_busy');
    expect(await queued()).toBe(1);
    beat.set(report(0));
    expect((await b).status).toBe(200);
    expect(await queued()).toBe(0);
    holders.abort();
  });

  it('sends the light tenant at once to a worker busy for its class but not for critical', async () => {
    // 0.88 of the blocks: busy at the standard threshold (0.8), not at critical's (0.8 × 1.2).
    const holders = await heavyAt(14500);
    // b is answered while the worker still reports the same load: it never waited for it to free.
    const b = await Promise.race([
      chat(sys.fe, keys.b),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('b waited for the worker to free')), WAIT_MS).unref(),
      ),
    ]);
    expect(b.status).toBe(200);
    expect(await queued()).toBe(0);
    holders.abort();
    beat.set(report(0));
  });
});
