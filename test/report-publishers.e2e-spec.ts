import { Subscription } from 'nats';
import { MODEL } from '@sluice/testkit';
import { useSystem } from './support/fixtures';
import { chat, metricValue } from './support/http';
import { waitFor } from './support/processes';

const WORKER = 'w-dual';
const BRIDGE = 'bridge e2e 4242';

/**
 * Issue 41 item 11: a worker that publishes its own load reports while a second publisher (an
 * engine bridge, here this test on real NATS) reports the same worker and rank. Last write won
 * (Dynamo's issue 7753): the worker's own idle report made a worker the bridge saw busy look free.
 * Now, within the worker TTL, the rank is judged by the higher of the two loads, counted in
 * `sluice_frontend_report_conflicts_total`, and the frontend warns once per worker.
 */
describe('two publishers for one worker', () => {
  const sys = useSystem({
    bus: true,
    reporting: true,
    workers: [['--worker-id', WORKER, '--report-interval-ms', '100']],
    frontend: [
      ...['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.9'],
      // Far beyond the test: the bridge's one report stays within the TTL throughout.
      ...['--worker-ttl-ms', '120000'],
    ],
    serving: true,
  });
  let own: Subscription;
  /** The worker's own reports seen on the bus so far. */
  let ownReports = 0;

  beforeAll(() => {
    own = sys.bus.nc.subscribe(`namespace.${sys.namespace}.kv_metrics`, {
      callback: (_err, msg) => {
        const r = msg.json<{ worker_id?: string; source?: string }>();
        if (r.worker_id === WORKER && r.source === undefined) ownReports++;
      },
    });
  });
  afterAll(() => own?.unsubscribe());

  /** Publishes one report of the worker as the bridge, then waits for two of the worker's own. */
  async function bridgeReports(activeDecodeBlocks: number): Promise<void> {
    sys.bus.report(sys.namespace, {
      worker_id: WORKER,
      endpoint: sys.worker.url,
      active_decode_blocks: activeDecodeBlocks,
      kv_total_blocks: 100,
      source: BRIDGE,
    });
    await sys.bus.flush();
    const after = ownReports + 2;
    await waitFor(() => ownReports >= after, "the worker's own reports after the bridge's");
  }

  const conflicts = async (): Promise<number> =>
    (await metricValue(sys.fe.url, 'sluice_frontend_report_conflicts_total')) ?? 0;

  it("judges the worker by the bridge's higher load, not by the last report, and counts it", async () => {
    expect(await conflicts()).toBe(0);
    await bridgeReports(95);
    // The worker's own reports (idle) came last: the bridge's busy one still stands.
    await waitFor(async () => (await conflicts()) >= 2, 'conflicts counted');
    expect(
      await metricValue(sys.fe.url, 'dynamo_frontend_worker_busy', { worker_id: WORKER }),
    ).toBe(1);
    for (let i = 0; i < 3; i++) {
      const res = await chat(sys.fe.url, { model: MODEL });
      expect(res.status).toBe(503);
      expect(res.headers.get('x-sluice-reject-reason')).toBe('all_workers_busy');
      const after = ownReports + 1;
      await waitFor(() => ownReports >= after, 'another report of the worker');
    }
  });

  it('judges by the higher load whichever publisher has it: both idle, the worker is free', async () => {
    const before = await conflicts();
    await bridgeReports(10);
    await waitFor(async () => (await conflicts()) > before + 1, 'conflicts counted');
    expect(
      await metricValue(sys.fe.url, 'dynamo_frontend_worker_busy', { worker_id: WORKER }),
    ).toBe(0);
    expect((await chat(sys.fe.url, { model: MODEL })).status).toBe(200);
  });

  it('warns once for the worker, naming both publishers', () => {
    const warnings = sys.fe.proc.output
      .split('\n')
      .filter((line) => line.includes(`worker ${WORKER} of model`) && line.includes('reported by'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`'${BRIDGE}'`);
    expect(warnings[0]).toContain('without a source');
  });
});
