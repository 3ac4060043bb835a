import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { Answer, metricValue } from './support/http';
import { FrontendProcess, waitFor } from './support/processes';
import { chatWith, tenantWithKey } from './support/tenants';

const TOKEN = 'tenant-limits-token';
const asOps = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

const putTenant = (fe: FrontendProcess, id: string, body: object) =>
  tenantWithKey(fe, TOKEN, id, body);

/** A streamed request of the tenant, read until its first event; abort it to end it. */
async function openStream(fe: FrontendProcess, key: string, maxTokens: number) {
  const abort = new AbortController();
  const res = await fetch(`${fe.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: maxTokens,
      stream: true,
    }),
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  await reader.read();
  return () => {
    abort.abort();
    void reader.cancel().catch(() => undefined);
  };
}

const usageOf = async (fe: FrontendProcess, id: string) =>
  (await (await fetch(`${fe.url}/tenants/${id}/usage?window=1h`, { headers: asOps })).json()) as {
    requests: { admitted: number; rate_limited: number; overloaded: number };
    tokens: { prompt: number; completion: number };
    last_minute: { requests: number; tokens: number; in_flight: number };
  };

function expectLimited(res: Answer, tenant: string, limit: string, reason: string): void {
  expect(res.status).toBe(429);
  expect(res.json).toEqual({
    error: {
      message: `Rate limit reached for tenant ${tenant}: ${limit}`,
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
    },
  });
  expect(res.headers.get('x-sluice-reject-reason')).toBe(reason);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
}

/**
 * docs/api.md#tenants, items 2, 3 and 5 of issue 43: each limit answers 429 with Retry-After and
 * its reason; tokens charged at admission are corrected to what the request used; two replicas
 * (real PostgreSQL, NATS, a real simulated worker) share a tenant's consumption.
 */
describe('tenant limits (two replicas)', () => {
  const flags = ['--admin-token', `ops:${TOKEN}`, '--tenant-sync-ms', '50'];
  const A = useSystem({
    database: 'tenantlimits',
    workers: [['--speedup', '1']],
    reporting: true,
    frontend: flags,
    serving: true,
  });
  const B = useSystem({
    namespace: A.namespace,
    frontend: (): string[] => ['--database-url', A.db.url(), ...flags],
  });

  it('answers the request past requests_per_minute with 429, Retry-After and the reason', async () => {
    const key = await putTenant(A.fe, 'rpm', { requests_per_minute: 3 });
    for (let i = 0; i < 3; i++) expect((await chatWith(A.fe, key)).status).toBe(200);
    expectLimited(await chatWith(A.fe, key), 'rpm', 'requests_per_minute 3', 'tenant_rate_limit');
    expect(
      await metricValue(A.fe.url, 'sluice_frontend_tenant_requests_total', {
        tenant: 'rpm',
        outcome: 'rate_limited',
      }),
    ).toBe(1);
    expect(
      await metricValue(A.fe.url, 'sluice_frontend_refusals_total', {
        reason: 'tenant_rate_limit',
      }),
    ).toBe(1);
    expect((await usageOf(A.fe, 'rpm')).requests).toEqual({
      admitted: 3,
      rate_limited: 1,
      overloaded: 0,
    });
    // Other tenants are not held back.
    expect((await chatWith(A.fe, 'no-such-key')).status).toBe(200);
  });

  it('answers a request past max_concurrency with 429 tenant_concurrency until one ends', async () => {
    const key = await putTenant(A.fe, 'conc', { max_concurrency: 1 });
    const end = await openStream(A.fe, key, 5000);
    expectLimited(await chatWith(A.fe, key), 'conc', 'max_concurrency 1', 'tenant_concurrency');
    expect((await chatWith(A.fe, key)).headers.get('retry-after')).toBe('1');
    end();
    await waitFor(async () => (await chatWith(A.fe, key)).status === 200, 'admitted again');
  });

  it('charges prompt + max_tokens at admission and corrects it to the usage at the end', async () => {
    const key = await putTenant(A.fe, 'tpm', { tokens_per_minute: 1200 });
    const end = await openStream(A.fe, key, 1000);
    // 1000 + prompt charged: 300 more do not fit while the stream runs.
    expectLimited(
      await chatWith(A.fe, key, 300),
      'tpm',
      'tokens_per_minute 1200',
      'tenant_rate_limit',
    );
    end();
    // Ended after a few tokens: the charge shrinks to them, and 300 more fit.
    await waitFor(async () => (await usageOf(A.fe, 'tpm')).last_minute.in_flight === 0, 'ended');
    expect((await usageOf(A.fe, 'tpm')).last_minute.tokens).toBeLessThan(900);
    expect((await chatWith(A.fe, key, 300)).status).toBe(200);
    const usage = await usageOf(A.fe, 'tpm');
    expect(usage.tokens.completion).toBeGreaterThanOrEqual(300);
    expect(usage.tokens.completion).toBeLessThan(1000);
  });

  it('holds requests_per_minute over both replicas: each counts what the other admitted', async () => {
    const key = await putTenant(A.fe, 'shared', { requests_per_minute: 6 });
    await waitFor(async () => (await usageOf(B.fe, 'shared')).last_minute !== undefined, 'B knows');
    for (let i = 0; i < 6; i++) expect((await chatWith(A.fe, key)).status).toBe(200);
    await waitFor(
      async () => (await usageOf(B.fe, 'shared')).last_minute.requests >= 6,
      'B has heard of A’s requests',
    );
    expectLimited(
      await chatWith(B.fe, key),
      'shared',
      'requests_per_minute 6',
      'tenant_rate_limit',
    );
    expect((await usageOf(B.fe, 'shared')).requests.admitted).toBe(0);
  });

  it('holds requests_per_minute over replicas taking turns: together they admit the limit', async () => {
    const key = await putTenant(A.fe, 'turns', { requests_per_minute: 6 });
    await waitFor(async () => (await usageOf(B.fe, 'turns')).last_minute !== undefined, 'B knows');
    const replicas = [A.fe, B.fe];
    let admitted = 0;
    for (let i = 0; i < 8; i++) {
      const [fe, other] = [replicas[i % 2], replicas[(i + 1) % 2]];
      const res = await chatWith(fe, key);
      if (i >= 6) {
        expectLimited(res, 'turns', 'requests_per_minute 6', 'tenant_rate_limit');
        continue;
      }
      expect(res.status).toBe(200);
      admitted++;
      // One sync later: the tolerance is what one replica admits before the other hears of it.
      await waitFor(
        async () => (await usageOf(other, 'turns')).last_minute.requests >= admitted,
        `the other replica has heard of ${admitted}`,
      );
    }
    for (const fe of replicas) {
      expect((await usageOf(fe, 'turns')).requests).toEqual({
        admitted: 3,
        rate_limited: 1,
        overloaded: 0,
      });
    }
  });
});

/**
 * docs/api.md#tenants, item 5 of issue 43: a tenant's overload 503s are counted for it whichever
 * path answers them — the byte prescan (a JSON body of known length) and the early refusal hook
 * (a chunked body) as well as the guard. Real PostgreSQL, NATS and a simulated worker; the test
 * publishes the worker's load reports so it is busy exactly when it says.
 */
describe('tenant counters of the early overload refusals', () => {
  const sys = useSystem({
    database: 'tenantoverload',
    bus: true,
    workers: [[]],
    frontend: [
      '--admin-token',
      `ops:${TOKEN}`,
      '--admission-control',
      'token-capacity',
      '--active-decode-blocks-threshold',
      '0.8',
    ],
  });

  /** A chat request with a chunked body: the prescan leaves it to the hook. */
  const chunkedChat = async (key: string): Promise<number> => {
    const bytes = new TextEncoder().encode(
      JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2 }),
    );
    const res = await fetch(`${sys.fe.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(bytes);
          c.close();
        },
      }),
      duplex: 'half',
    });
    await res.arrayBuffer();
    return res.status;
  };

  it('counts the 503s of the prescan and of the early hook for the tenant, as overloaded', async () => {
    const key = await putTenant(sys.fe, 'crowded', {});
    const busy = () =>
      sys.bus.report(sys.fe.namespace, {
        worker_id: 'w-busy',
        endpoint: sys.workers[0].url,
        active_decode_blocks: 90,
        max_num_batched_tokens: 8192,
      });
    busy();
    // Real workers report at least every second; the test stops before the bus closes.
    const heartbeat = setInterval(busy, 500);
    try {
      await refusedAndCounted(key);
    } finally {
      clearInterval(heartbeat);
    }
  });

  async function refusedAndCounted(key: string): Promise<void> {
    let refused = 0;
    await waitFor(async () => {
      const status = (await chatWith(sys.fe, key)).status;
      if (status === 503) refused++;
      return refused > 0 || undefined;
    }, 'the busy worker refuses');
    for (let i = 0; i < 3; i++) {
      expect((await chatWith(sys.fe, key)).status).toBe(503);
      expect(await chunkedChat(key)).toBe(503);
      refused += 2;
    }
    expect(
      await metricValue(sys.fe.url, 'sluice_frontend_tenant_requests_total', {
        tenant: 'crowded',
        outcome: 'overloaded',
      }),
    ).toBe(refused);
    expect((await usageOf(sys.fe, 'crowded')).requests.overloaded).toBe(refused);
    // A request of no configured tenant is counted as other.
    expect((await chatWith(sys.fe, 'no-such-key')).status).toBe(503);
    expect(
      await metricValue(sys.fe.url, 'sluice_frontend_tenant_requests_total', {
        tenant: 'other',
        outcome: 'overloaded',
      }),
    ).toBe(1);
  }
});
