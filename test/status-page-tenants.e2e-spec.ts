import { existsSync } from 'node:fs';
import { Browser, chromium, Page } from 'playwright-core';
import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { FrontendProcess, waitFor } from './support/processes';
import { chatWith, tenantWithKey } from './support/tenants';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'status-tenants-token';
const asOps = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const WORKER = 'w-tenants';

interface TenantView {
  tenant: string;
  weight: number;
  weight_share: number;
  requests: { admitted: number; rate_limited: number; overloaded: number };
  admitted_share: number | null;
  tokens: { prompt: number; completion: number };
  in_flight: number;
  limits: Record<string, unknown>;
}

interface StatusView {
  models: Array<{ model: string; all_busy: boolean; workers_total: number }>;
  tenants: {
    window_minutes: number;
    tenants_total: number;
    tenants_omitted: number;
    tenants: TenantView[];
  } | null;
}

const statusOf = async (fe: FrontendProcess): Promise<StatusView> =>
  (await (await fetch(`${fe.url}/ui/status.json`)).json()) as StatusView;

const putTenant = (fe: FrontendProcess, id: string, body: object) =>
  tenantWithKey(fe, TOKEN, id, body);

/**
 * The tenants section of the status page (issue 43 item 5; docs/api.md#status-page): two tenants
 * made through the admin API send requests with their keys through a real frontend (real
 * PostgreSQL, NATS, a real simulated worker whose load the test publishes), and status.json and
 * the page in a real Chromium show each one's weight, admitted and refused requests by reason,
 * tokens, shares and limits. A second replica started without `--status-page-tenants` lists none.
 */
describe('status page: tenants (--status-page-tenants)', () => {
  beforeAll(() => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium).`,
      );
    }
  });
  let heartbeat: NodeJS.Timeout | undefined;
  // Stopped before the system's own afterAll closes the bus: jest runs afterAll hooks in the
  // order they were declared, and a report published on a closed bus fails the suite.
  afterAll(() => clearInterval(heartbeat));
  const sys = useSystem({
    database: 'statustenants',
    bus: true,
    workers: [[]],
    frontend: [
      '--admin-token',
      `ops:${TOKEN}`,
      '--admission-control',
      'token-capacity',
      '--active-decode-blocks-threshold',
      '0.8',
      '--status-page-tenants',
    ],
  });
  const quiet = useSystem({
    namespace: sys.namespace,
    frontend: (): string[] => ['--database-url', sys.db.url(), '--admin-token', `ops:${TOKEN}`],
  });
  let browser: Browser | undefined;
  let page: Page;
  let blocks = 10;
  const pageErrors: string[] = [];

  const report = (): void =>
    sys.bus.report(sys.fe.namespace, {
      worker_id: WORKER,
      endpoint: sys.workers[0].url,
      active_decode_blocks: blocks,
      max_num_batched_tokens: 8192,
    });

  /** Publishes the worker's load (busy above 80 blocks of 100) until status.json agrees. */
  async function load(used: number): Promise<void> {
    blocks = used;
    report();
    await waitFor(
      async () =>
        (await statusOf(sys.fe)).models.find((m) => m.model === MODEL)?.all_busy === used > 80 ||
        undefined,
      `worker at ${used} blocks`,
    );
  }

  beforeAll(async () => {
    // Real workers report at least every second; do the same so it never expires mid-test.
    heartbeat = setInterval(report, 500);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 600 } });
    page.setDefaultTimeout(5000);
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') pageErrors.push(msg.text());
    });
  });

  afterAll(async () => {
    await browser?.close();
  });

  const cell = (tenant: string, cls: string) =>
    page.locator(`section.tenants tr[data-tenant="${tenant}"] td.${cls}`).textContent();

  it("shows each tenant's weight, admitted and refused requests by reason, tokens and limits", async () => {
    const keyA = await putTenant(sys.fe, 'team-a', { weight: 3, requests_per_minute: 2 });
    const keyB = await putTenant(sys.fe, 'team-b', { weight: 1, max_concurrency: 4 });
    await load(10);
    for (let i = 0; i < 2; i++) expect((await chatWith(sys.fe, keyA)).status).toBe(200);
    const limited = await chatWith(sys.fe, keyA);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-sluice-reject-reason')).toBe('tenant_rate_limit');
    expect((await chatWith(sys.fe, keyB)).status).toBe(200);
    await load(95);
    const overloaded = await chatWith(sys.fe, keyB);
    expect(overloaded.status).toBe(503);
    expect(overloaded.headers.get('x-sluice-reject-reason')).toBe('all_workers_busy');

    const tenants = (await statusOf(sys.fe)).tenants;
    expect(tenants).toMatchObject({ window_minutes: 5, tenants_total: 2, tenants_omitted: 0 });
    expect(tenants?.tenants.map((t) => t.tenant)).toEqual(['team-a', 'team-b']);
    const [a, b] = tenants?.tenants ?? [];
    expect(a).toMatchObject({
      weight: 3,
      weight_share: 0.75,
      requests: { admitted: 2, rate_limited: 1, overloaded: 0 },
      admitted_share: 2 / 3,
      in_flight: 0,
      limits: {
        requests_per_minute: 2,
        tokens_per_minute: null,
        max_concurrency: null,
        priority: null,
      },
    });
    expect(b).toMatchObject({
      weight: 1,
      weight_share: 0.25,
      requests: { admitted: 1, rate_limited: 0, overloaded: 1 },
      admitted_share: 1 / 3,
      limits: { max_concurrency: 4, requests_per_minute: null },
    });
    // The worker's reported usage, as the tenant's usage answer counts it.
    const usage = (await (
      await fetch(`${sys.fe.url}/tenants/team-a/usage?window=1h`, { headers: asOps })
    ).json()) as { tokens: TenantView['tokens'] };
    expect(a.tokens).toEqual(usage.tokens);
    expect(a.tokens.prompt).toBeGreaterThan(0);

    await page.goto(`${sys.fe.url}/ui`);
    await waitFor(
      async () =>
        (await page.locator('section.tenants tr[data-tenant]').count()) === 2 || undefined,
      'tenant rows drawn',
      10000,
      100,
    );
    expect(await cell('team-a', 'tenant-id')).toBe('team-a');
    expect(await cell('team-a', 'weight')).toBe('3 (75 %)');
    expect(await cell('team-a', 'admitted')).toBe('2 (66.7 %)');
    expect(await cell('team-a', 'rate-limited')).toBe('1');
    expect(await cell('team-a', 'overloaded')).toBe('0');
    expect(await cell('team-a', 'tokens')).toBe(`${a.tokens.prompt} + ${a.tokens.completion}`);
    expect(await cell('team-a', 'limits')).toBe('2 req/min');
    expect(await cell('team-b', 'weight')).toBe('1 (25 %)');
    expect(await cell('team-b', 'admitted')).toBe('1 (33.3 %)');
    expect(await cell('team-b', 'rate-limited')).toBe('0');
    expect(await cell('team-b', 'overloaded')).toBe('1');
    expect(await cell('team-b', 'limits')).toBe('4 in flight');
    expect(await page.locator('section.tenants td.hot').count()).toBe(2);
    await load(10);
  });

  it('lists no tenants on a replica without --status-page-tenants', async () => {
    // It knows them (same database): it is only the page that does not list them.
    const listed = await fetch(`${quiet.fe.url}/tenants`, { headers: asOps });
    expect(((await listed.json()) as { tenants: unknown[] }).tenants).toHaveLength(2);
    expect((await statusOf(quiet.fe)).tenants).toBeNull();
  });

  it('never takes markup for a tenant id: the admin API refuses it and the page shows text', async () => {
    const hostile = encodeURIComponent('<img src=x onerror="document.title=1">');
    const res = await fetch(`${sys.fe.url}/tenants/${hostile}`, {
      method: 'PUT',
      headers: asOps,
      body: JSON.stringify({ weight: 1 }),
    });
    expect(res.status).toBe(400);
    await page.reload();
    await waitFor(
      async () =>
        (await page.locator('section.tenants tr[data-tenant]').count()) === 2 || undefined,
      'tenant rows drawn again',
      10000,
      100,
    );
    expect((await statusOf(sys.fe)).tenants?.tenants_total).toBe(2);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.title()).toBe('Sluice status');
    expect(pageErrors).toEqual([]);
  });
});

/** Issue 43: the OpenAPI document describes the tenant routes' bodies and the status page's tenants. */
describe('the OpenAPI document (GET /docs-json) describes tenants', () => {
  const sys = useSystem({ frontend: [] });

  it('lists the fields of tenants, keys, usage and the status page tenants', async () => {
    const doc = (await (await fetch(`${sys.fe.url}/docs-json`)).json()) as {
      paths: Record<string, unknown>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const fields = (schema: string) =>
      Object.keys(doc.components.schemas[schema]?.properties ?? {});
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/tenants',
        '/tenants/{id}',
        '/tenants/{id}/keys',
        '/tenants/{id}/usage',
      ]),
    );
    expect(fields('TenantDto')).toEqual(
      expect.arrayContaining(['id', 'weight', 'requests_per_minute', 'keys', 'created_at']),
    );
    expect(fields('NewKeyDto')).toEqual(['key', 'key_id']);
    expect(fields('TenantUsageDto')).toEqual([
      'tenant',
      'window',
      'requests',
      'tokens',
      'last_minute',
    ]);
    expect(fields('TenantAuditEntryDto')).toEqual(
      expect.arrayContaining(['id', 'at', 'actor', 'tenant', 'action', 'before', 'after']),
    );
    expect(fields('StatusDto')).toContain('tenants');
    expect(fields('TenantStatusDto')).toEqual(
      expect.arrayContaining(['tenant', 'weight', 'requests', 'admitted_share', 'limits']),
    );
  });
});
