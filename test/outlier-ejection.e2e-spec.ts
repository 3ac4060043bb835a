import { ServerResponse } from 'node:http';
import { MODEL } from '@sluice/testkit';
import { FakeWorker } from './support/fake-worker';
import { useSystem } from './support/fixtures';
import { chat, metricValue } from './support/http';
import { Heartbeat } from './support/nats-server';
import { NATS_URL, waitFor } from './support/processes';

interface WorkerStatus {
  worker_id: string;
  routing: string;
  consecutive_failures: number;
  ejected_until_ms: number | null;
}

/** The workers of MODEL as `/ui/status.json` shows them, by id. */
async function workersOf(base: string): Promise<Record<string, WorkerStatus>> {
  const status = (await (await fetch(`${base}/ui/status.json`)).json()) as {
    models: Array<{ model: string; workers: WorkerStatus[] }>;
  };
  const model = status.models.find((m) => m.model === MODEL);
  return Object.fromEntries((model?.workers ?? []).map((w) => [w.worker_id, w]));
}

/** A worker written in the test that answers 500 while `failing`, else a chat completion. */
async function flakyWorker(state: { failing: boolean }): Promise<FakeWorker> {
  return FakeWorker.start((_req, res: ServerResponse) => {
    if (state.failing) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'engine fell over' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'flaky', object: 'chat.completion', choices: [] }));
  });
}

/** Requests in a row, each answered before the next: `status worker` of each. */
async function inRow(base: string, n: number): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await chat(base);
    seen.push(`${res.status} ${res.headers.get('x-sluice-worker-id') ?? '-'}`);
  }
  return seen;
}

/**
 * Issue 41 item 10: a worker whose requests fail `--eject-after` times in a row leaves routing
 * for a backoff, then gets one probe request; its load reports count for the 503 decision only
 * while it is in routing. `steady` is a real simulated worker, `flaky` a server written here that
 * answers 500; the test publishes both workers' load reports on NATS, so it sets their load.
 */
describe('outlier ejection', () => {
  describe('a worker whose requests fail in a row', () => {
    const sys = useSystem({
      bus: true,
      workers: [[]],
      frontend: [
        ...['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.9'],
        ...['--upstream-retries', '0', '--eject-after', '3'],
        // Long enough that no probe comes while these tests run.
        ...['--eject-backoff-ms', '600000', '--eject-backoff-max-ms', '600000'],
      ],
    });
    const state = { failing: true };
    let flaky: FakeWorker;
    let beat: Heartbeat;

    beforeAll(async () => {
      flaky = await flakyWorker(state);
      beat = await Heartbeat.start(NATS_URL, sys.namespace);
      beat.set(
        { worker_id: 'steady', endpoint: sys.worker.url },
        { worker_id: 'flaky', endpoint: flaky.url },
      );
      await waitFor(
        async () => Object.keys(await workersOf(sys.fe.url)).length === 2,
        'both workers known',
      );
    });
    afterAll(async () => {
      await beat?.close();
      await flaky?.stop();
    });

    it('leaves routing after --eject-after failures: every later request goes to the other worker', async () => {
      const seen = await inRow(sys.fe.url, 12);
      // Round-robin alternates: the failing worker gets three requests (502), then none.
      expect(seen.filter((s) => s === '502 -')).toHaveLength(3);
      expect(seen.filter((s) => s === '200 steady')).toHaveLength(9);
      expect(seen.slice(6)).toEqual(Array(6).fill('200 steady'));
      expect(flaky.seen).toHaveLength(3);
    });

    it('shows the ejection in /ui/status.json and in the metrics', async () => {
      const workers = await workersOf(sys.fe.url);
      expect(workers.flaky).toMatchObject({ routing: 'ejected', consecutive_failures: 3 });
      expect(workers.flaky.ejected_until_ms).toBeGreaterThan(Date.now());
      expect(workers.steady).toMatchObject({ routing: 'in', ejected_until_ms: null });
      const ejected = (id: string) =>
        metricValue(sys.fe.url, 'sluice_frontend_worker_ejected', { worker_id: id });
      expect(await ejected('flaky')).toBe(1);
      expect(await ejected('steady')).toBe(0);
      expect(
        await metricValue(sys.fe.url, 'sluice_frontend_worker_ejections_total', { model: MODEL }),
      ).toBe(1);
    });

    it("stops counting the ejected worker's free load for the 503 decision", async () => {
      // The ejected worker still reports itself idle; the other one is now over the threshold.
      beat.set(
        { worker_id: 'steady', endpoint: sys.worker.url, active_decode_blocks: 95 },
        { worker_id: 'flaky', endpoint: flaky.url },
      );
      await waitFor(
        async () =>
          (await metricValue(sys.fe.url, 'dynamo_frontend_worker_busy', {
            worker_id: 'steady',
          })) === 1,
        'steady busy',
      );
      const res = await chat(sys.fe.url);
      expect(res.status).toBe(503);
      expect(res.headers.get('x-sluice-reject-reason')).toBe('all_workers_busy');
      expect(flaky.seen).toHaveLength(3);
    });
  });

  describe('a probe after the backoff', () => {
    const sys = useSystem({
      bus: true,
      workers: [[]],
      frontend: [
        ...['--upstream-retries', '0', '--eject-after', '2'],
        ...['--eject-backoff-ms', '300', '--eject-backoff-max-ms', '300'],
      ],
    });
    const state = { failing: true };
    let flaky: FakeWorker;
    let beat: Heartbeat;

    beforeAll(async () => {
      flaky = await flakyWorker(state);
      beat = await Heartbeat.start(NATS_URL, sys.namespace);
      beat.set(
        { worker_id: 'steady', endpoint: sys.worker.url },
        { worker_id: 'flaky', endpoint: flaky.url },
      );
      await waitFor(
        async () => Object.keys(await workersOf(sys.fe.url)).length === 2,
        'both workers known',
      );
    });
    afterAll(async () => {
      await beat?.close();
      await flaky?.stop();
    });

    it('puts the worker back in routing when its probe succeeds', async () => {
      await waitFor(async () => {
        await chat(sys.fe.url);
        return (await workersOf(sys.fe.url)).flaky?.routing !== 'in';
      }, 'flaky ejected');
      // Out of routing, the worker gets one request per backoff at most: each probe fails.
      state.failing = false;
      await waitFor(async () => {
        const seen = await inRow(sys.fe.url, 2);
        return seen.includes('200 flaky') && (await workersOf(sys.fe.url)).flaky.routing === 'in';
      }, 'flaky back in routing');
      expect(await workersOf(sys.fe.url)).toMatchObject({
        flaky: { routing: 'in', consecutive_failures: 0, ejected_until_ms: null },
      });
      expect(
        await metricValue(sys.fe.url, 'sluice_frontend_worker_ejected', { worker_id: 'flaky' }),
      ).toBe(0);
      // Back in routing, it takes its share of requests again.
      expect((await inRow(sys.fe.url, 4)).filter((s) => s === '200 flaky')).toHaveLength(2);
    });
  });
});
