import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import { MODEL, ReportFields } from './support/bus';
import { useSystem } from './support/fixtures';
import { chat, post } from './support/http';
import { waitFor } from './support/processes';

const CHROMIUM = '/usr/bin/chromium';
/**
 * A look at the page as the test leaves it. The one in the docs is taken after minutes of real
 * traffic (docs/operations.md, "Status page"): a test run must not change tracked files.
 */
const SCREENSHOT = join(tmpdir(), `sluice-status-page-${process.pid}.png`);
const BUSY = 'w-busy';
/** Sums of rates (counts ÷ 5 s) in floating point. */
const EPSILON = 1e-9;
const FREE = 'w-free';

interface RowView {
  badge: string | null;
  kv: string | null;
  kvOver: boolean;
}

/**
 * The status page in a real (Debian) Chromium against a real frontend process, real NATS and
 * real simulated workers; the test publishes the load reports so each state is exact.
 */
describe('status page (GET /ui) in a browser', () => {
  beforeAll(() => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium). ` +
          'This test never downloads a browser.',
      );
    }
  });
  const sys = useSystem({
    bus: true,
    workers: [[], []],
    frontend: ['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.8'],
  });
  let browser: Browser | undefined;
  let page: Page;
  let heartbeat: NodeJS.Timeout | undefined;
  const pageErrors: string[] = [];
  const load = new Map<string, ReportFields>();

  beforeAll(async () => {
    // Real workers report at least every second; do the same so none expires mid-test.
    heartbeat = setInterval(() => load.forEach((f) => sys.bus.report(sys.fe.namespace, f)), 500);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 400 } });
    page.setDefaultTimeout(5000);
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') pageErrors.push(msg.text());
    });
  });

  afterAll(async () => {
    clearInterval(heartbeat);
    await browser?.close();
  });

  function report(fields: ReportFields): void {
    load.set(fields.worker_id, fields);
    sys.bus.report(sys.fe.namespace, fields);
  }

  const decode = (id: string, endpoint: string, blocks: number): void =>
    report({ worker_id: id, endpoint, active_decode_blocks: blocks, max_num_batched_tokens: 8192 });

  /** What the page shows for one worker row; null while there is no such row. */
  async function row(id: string): Promise<RowView | null> {
    const tr = page
      .locator('tr[data-worker-id]')
      .filter({ has: page.locator('.worker-id').getByText(id, { exact: true }) });
    if ((await tr.count()) !== 1) return null;
    return {
      badge: await tr.locator('.badge').textContent(),
      kv: await tr.locator('.meter.kv .meter-text').textContent(),
      kvOver: (await tr.locator('.meter.kv.over').count()) === 1,
    };
  }

  const card = (model: string) =>
    page
      .locator('section.card')
      .filter({ has: page.getByRole('heading', { name: model, exact: true }) });

  const stat = (model: string, cls: string) =>
    card(model).locator(`.stat.${cls} .stat-value`).textContent();

  /** Polls the page (it redraws every second) until `probe` holds. */
  const until = (probe: () => Promise<boolean>, what: string): Promise<true> =>
    waitFor(async () => (await probe()) || undefined, what, 10000, 100);

  it('shows the busy and the free worker, their KV usage and the effective threshold', async () => {
    decode(BUSY, sys.workers[0].url, 95);
    decode(FREE, sys.workers[1].url, 10);
    const res = await page.goto(`${sys.fe.url}/ui`);
    expect(res?.headers()['content-type']).toBe('text/html; charset=utf-8');
    expect(res?.headers()['content-security-policy']).toContain("script-src 'sha256-");
    // A reload would lose this: the page must redraw in place.
    await page.evaluate('window.e2eMark = "same page"');

    await until(async () => (await row(BUSY))?.badge === 'BUSY', 'busy worker shown as BUSY');
    await until(async () => (await row(FREE))?.badge === 'free', 'free worker shown as free');
    expect(await row(BUSY)).toEqual({ badge: 'BUSY', kv: 'KV 95 % (95/100)', kvOver: true });
    expect(await row(FREE)).toEqual({ badge: 'free', kv: 'KV 10 % (10/100)', kvOver: false });
    expect(await stat(MODEL, 'threshold.decode')).toBe('0.8');
    expect(await stat(MODEL, 'threshold.prefill')).toBe('unset');
    expect(await stat(MODEL, 'threshold.ttft')).toBe('unset');
    // The decode threshold is marked on each KV meter.
    const marker = page
      .locator('tr[data-worker-id]')
      .filter({ has: page.locator('.worker-id').getByText(BUSY, { exact: true }) })
      .locator('.meter.kv .marker');
    expect(await marker.evaluate((m: { style: { left: string } }) => m.style.left)).toBe('80%');
    expect(await card(MODEL).locator('.card-head .badge').textContent()).toBe('accepting');
    expect(await stat(MODEL, 'busy-count')).toBe('1 / 2');
    // Free for critical (judged at 0.96) · standard (0.8) · sheddable (0.64).
    expect(await stat(MODEL, 'priority-classes')).toBe('2 · 1 · 1');
  });

  it('shows the TTFT objective set for the model, on its card and in status.json, until cleared', async () => {
    const objective = async (): Promise<unknown> => {
      const status = (await (await fetch(`${sys.fe.url}/ui/status.json`)).json()) as {
        models: Array<{ model: string; ttft_slo_ms: unknown }>;
      };
      return status.models.find((m) => m.model === MODEL)?.ttft_slo_ms;
    };
    expect(await objective()).toBeNull();
    // Far above any prediction: it routes but refuses nothing in the tests after this one.
    const set = await post(`${sys.fe.url}/busy_threshold`, { model: MODEL, ttft_slo_ms: 60000 });
    expect(set.status).toBe(200);
    await until(async () => (await stat(MODEL, 'threshold.ttft')) === '60000', 'objective shown');
    expect(await objective()).toBe(60000);
    expect(await card(MODEL).locator('.stat.threshold.ttft .stat-label').textContent()).toBe(
      'TTFT objective (ms)',
    );

    const cleared = await post(`${sys.fe.url}/busy_threshold`, { model: MODEL, ttft_slo_ms: null });
    expect(cleared.status).toBe(200);
    await until(async () => (await stat(MODEL, 'threshold.ttft')) === 'unset', 'objective cleared');
    expect(await objective()).toBeNull();
  });

  it('shows rejections per second while every worker is busy', async () => {
    decode(FREE, sys.workers[1].url, 90);
    await until(async () => (await row(FREE))?.badge === 'BUSY', 'second worker busy');
    expect(await card(MODEL).locator('.card-head .badge').textContent()).toBe('ALL BUSY');
    for (let i = 0; i < 3; i++) expect((await chat(sys.fe.url)).status).toBe(503);
    await until(async () => (await stat(MODEL, 'rejected-total')) === '3', 'rejected total 3');
    await until(async () => Number(await stat(MODEL, 'rejections')) > 0, 'rejections/s above 0');

    decode(FREE, sys.workers[1].url, 10);
    await until(async () => (await row(FREE))?.badge === 'free', 'second worker free again');
  });

  it('redraws without a reload when the busy worker goes free', async () => {
    decode(BUSY, sys.workers[0].url, 20);
    await until(async () => (await row(BUSY))?.badge === 'free', 'busy worker shown as free');
    expect(await row(BUSY)).toEqual({ badge: 'free', kv: 'KV 20 % (20/100)', kvOver: false });
    expect(await stat(MODEL, 'busy-count')).toBe('0 / 2');
    expect(await page.evaluate('window.e2eMark')).toBe('same page');
  });

  it('charts the last minutes: admitted and rejected requests, busy workers and KV usage', async () => {
    decode(BUSY, sys.workers[0].url, 95);
    decode(FREE, sys.workers[1].url, 90);
    await until(
      async () => (await card(MODEL).locator('.card-head .badge').textContent()) === 'ALL BUSY',
      'every worker busy',
    );
    for (let i = 0; i < 3; i++) expect((await chat(sys.fe.url)).status).toBe(503);
    decode(FREE, sys.workers[1].url, 10);
    await until(async () => (await row(FREE))?.badge === 'free', 'a worker free again');
    for (let i = 0; i < 4; i++) expect((await chat(sys.fe.url)).status).toBe(200);
    // Buckets are served once complete (5 s) and the page fetches them every 5 s.
    const chart = (key: string) => card(MODEL).locator(`.charts path.series[data-series="${key}"]`);
    const values = async (key: string): Promise<number[]> => {
      const raw = (await chart(key).getAttribute('data-values')) ?? '';
      return raw
        .split(',')
        .filter((v) => v !== '')
        .map(Number);
    };
    const sum = async (key: string) => (await values(key)).reduce((a, b) => a + b, 0);
    await waitFor(
      async () =>
        ((await chart('admitted').count()) === 1 && (await sum('admitted')) >= 4 / 5 - EPSILON) ||
        undefined,
      'admitted requests charted',
      30000,
      200,
    );
    // At least these 3 rejections and 4 admitted requests, as rates over 5-s buckets (the
    // first bucket may be shorter, so its rate is higher).
    expect(await sum('rejected-standard')).toBeGreaterThanOrEqual(3 / 5 - EPSILON);
    expect(await sum('admitted')).toBeGreaterThanOrEqual(4 / 5 - EPSILON);
    expect(await sum('rejected-critical')).toBe(0);
    expect(await sum('rejected-sheddable')).toBe(0);
    for (const key of ['admitted', 'rejected-standard']) {
      expect(await chart(key).getAttribute('d')).toMatch(/^M[\d.]+ [\d.]+(L[\d.]+ [\d.]+)*$/);
    }
    // One busy worker of two, then both (95 % and 90 % of KV, the most this test reports).
    const busy = await values('busy-share');
    expect(Math.max(...busy)).toBeGreaterThanOrEqual(0.5);
    expect(Math.max(...busy)).toBeLessThanOrEqual(1);
    const kv = await values('kv-usage');
    expect(Math.max(...kv)).toBeGreaterThan(0.5);
    expect(Math.max(...kv)).toBeLessThanOrEqual(0.925);

    const rates = card(MODEL).locator('.chart.rates');
    expect(await rates.locator('figcaption').textContent()).toBe(
      'Requests per second · last 10 min',
    );
    expect(await rates.locator('svg text').allTextContents()).toEqual(
      expect.arrayContaining(['0', '−10 min', '−2 min', 'now']),
    );
    expect(await rates.locator('.legend-group').textContent()).toBe('rejected:');
    expect(await card(MODEL).locator('.legend-item').allTextContents()).toEqual([
      expect.stringMatching(/^admitted [\d.]+\/s$/),
      expect.stringMatching(/^critical 0\/s$/),
      expect.stringMatching(/^standard [\d.]+\/s$/),
      expect.stringMatching(/^sheddable 0\/s$/),
      expect.stringMatching(/^KV usage \(mean\) \d+ %$/),
      expect.stringMatching(/^busy workers \d+ %$/),
    ]);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });

  it('shows names from the network as text, never as markup', async () => {
    const model = '<b id="injected">model</b>';
    const id = '<img src="x" onerror="document.title=\'owned\'">';
    report({ worker_id: id, model, endpoint: sys.workers[0].url, active_decode_blocks: 1 });
    await until(async () => (await row(id))?.badge === 'free', 'hostile worker row');
    expect(await card(model).count()).toBe(1);
    expect(await page.locator('#injected, main img').count()).toBe(0);
    expect(await page.title()).toBe('Sluice status');
    expect(pageErrors).toEqual([]);
  });
});
