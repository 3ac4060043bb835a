import { MODEL } from './support/bus';
import { FakeWorker } from './support/fake-worker';
import { useSystem } from './support/fixtures';
import { metricValue, openStream, OVERLOAD_BODY, post } from './support/http';
import { waitFor } from './support/processes';

/** Generous: a busy 2-core machine can be slow; speed belongs to the bench. */
const SETTLED_MS = 60_000;
const WORKER_HEADER = 'x-sluice-worker-id';

interface WorkerView {
  worker_id: string;
  ttft_prediction: { predicted_ms: number; observations: number };
}

/** One streamed chat completion read to its end: its status, body and serving worker. */
async function streamed(
  base: string,
  content = 'Hello there',
): Promise<{ status: number; text: string; worker: string | null; reason: string | null }> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: 'user', content }],
      max_tokens: 2,
      stream: true,
    }),
  });
  return {
    status: res.status,
    text: await res.text(),
    worker: res.headers.get(WORKER_HEADER),
    reason: res.headers.get('x-sluice-reject-reason'),
  };
}

/**
 * A streamed request left waiting for its first token on a worker slowed to a crawl: while it
 * waits, the objective's gate cannot explore that worker (docs/operations.md, "TTFT objective").
 * `stop` aborts it.
 */
function holdInPrefill(base: string): { stop: () => void } {
  const abort = new AbortController();
  openStream(base, 2, abort.signal).then(
    (res) => res.body?.cancel().catch(() => undefined),
    () => undefined,
  );
  return { stop: () => abort.abort() };
}

/** 500×: one engine step takes seconds, so a request stays waiting for its first token. */
const CRAWL = 0.002;

const setSpeedup = async (url: string, speedup: number): Promise<void> => {
  const res = await fetch(`${url}/sim/speedup`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ speedup }),
  });
  expect(res.status).toBe(200);
};

/** Until this frontend has exactly `n` requests of the model in flight. */
const inflight = (base: string, n: number): Promise<unknown> =>
  waitFor(
    async () =>
      ((await metricValue(base, 'dynamo_frontend_inflight_requests', { model: MODEL })) ?? 0) === n,
    `${n} requests in flight`,
    SETTLED_MS,
  );

async function workers(base: string): Promise<WorkerView[]> {
  const status = (await (await fetch(`${base}/ui/status.json`)).json()) as {
    models: Array<{ workers: WorkerView[] }>;
  };
  return status.models.flatMap((m) => m.workers);
}

const metric = async (base: string, name: string, labels: Record<string, string>) =>
  (await metricValue(base, name, labels)) ?? 0;

/**
 * The TTFT objective of docs/operations.md#ttft-objective end to end: real frontend processes, real NATS and
 * PostgreSQL, real simulated workers (one slowed down with PUT /sim/speedup), and a fake
 * worker that holds a request so that the next one waits in the router queue.
 */
describe('TTFT objective: routing to the lowest prediction, refusing what cannot meet it', () => {
  const sys = useSystem({
    database: 'slo',
    reporting: true,
    workers: [
      ['--speedup', '1', '--worker-id', 'fast'],
      ['--speedup', '1', '--worker-id', 'slow'],
    ],
    frontend: ['--admission-control', 'token-capacity'],
    serving: true,
  });
  const slowWorker = () => sys.workers[1];
  const setObjective = (value: unknown) =>
    post(`${sys.fe.url}/busy_threshold`, { model: MODEL, ttft_slo_ms: value });

  it('routes to the faster worker while it meets the objective, refuses with the overload 503 when none does', async () => {
    const slowed = await fetch(`${slowWorker().url}/sim/speedup`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ speedup: 0.05 }),
    });
    expect(slowed.status).toBe(200);
    // Without an objective round-robin teaches both models, until the slow one is predicted slow.
    let fast = 0;
    let slow = 0;
    await waitFor(
      async () => {
        for (let i = 0; i < 4; i++) expect((await streamed(sys.fe.url)).status).toBe(200);
        const views = await workers(sys.fe.url);
        fast = views.find((w) => w.worker_id === 'fast')?.ttft_prediction.predicted_ms ?? 0;
        slow = views.find((w) => w.worker_id === 'slow')?.ttft_prediction.predicted_ms ?? 0;
        return fast > 0 && slow > 4 * fast;
      },
      'the slowed worker predicted slower',
      SETTLED_MS,
    );

    // An objective between the two: only the fast worker can meet it.
    expect((await setObjective(Math.round(Math.sqrt(fast * slow)))).status).toBe(200);
    const errorsBefore = await metric(
      sys.fe.url,
      'sluice_frontend_ttft_prediction_error_seconds_count',
      { model: MODEL },
    );
    const served = [];
    for (let i = 0; i < 6; i++) served.push(await streamed(sys.fe.url));
    expect(served.map((r) => [r.status, r.worker])).toEqual(Array(6).fill([200, 'fast']));
    // Every streamed answer of a model with an objective adds its prediction error.
    expect(
      await metric(sys.fe.url, 'sluice_frontend_ttft_prediction_error_seconds_count', {
        model: MODEL,
      }),
    ).toBe(errorsBefore + 6);

    // 1 ms: no worker can meet it. A would-be refusal is still explored on a worker with nothing
    // of this frontend's waiting for its first token: with both crawling, the first request on
    // each is explored and stays in prefill; from then on every request is refused.
    expect((await setObjective(1)).status).toBe(200);
    await setSpeedup(sys.workers[0].url, CRAWL);
    await setSpeedup(slowWorker().url, CRAWL);
    await inflight(sys.fe.url, 0);
    const explored = [holdInPrefill(sys.fe.url)];
    await inflight(sys.fe.url, 1);
    explored.push(holdInPrefill(sys.fe.url));
    await inflight(sys.fe.url, 2);
    const labels = { model: MODEL, endpoint: 'chat_completions', priority: 'standard' };
    const sloBefore = await metric(sys.fe.url, 'sluice_frontend_slo_rejection_total', labels);
    const rejectedBefore = await metric(sys.fe.url, 'dynamo_frontend_model_rejection_total', {
      model: MODEL,
      endpoint: 'chat_completions',
    });
    for (let i = 0; i < 3; i++) {
      const refused = await streamed(sys.fe.url);
      expect(refused.status).toBe(503);
      expect(refused.text).toBe(OVERLOAD_BODY);
      expect(refused.reason).toBe('objective');
    }
    const unary = await post(`${sys.fe.url}/v1/chat/completions`, {
      model: MODEL,
      messages: [{ role: 'user', content: 'Hello there' }],
      max_tokens: 2,
    });
    expect([unary.status, unary.text, unary.headers.get('retry-after')]).toEqual([
      503,
      OVERLOAD_BODY,
      '1',
    ]);
    expect(await metric(sys.fe.url, 'sluice_frontend_slo_rejection_total', labels)).toBe(
      sloBefore + 4,
    );
    expect(
      await metric(sys.fe.url, 'dynamo_frontend_model_rejection_total', {
        model: MODEL,
        endpoint: 'chat_completions',
      }),
    ).toBe(rejectedBefore + 4);
    for (const e of explored) e.stop();
    await setSpeedup(sys.workers[0].url, 1);
    await setSpeedup(slowWorker().url, 0.05);

    // Cleared: no objective, everything admitted again.
    expect((await setObjective(null)).status).toBe(200);
    expect((await streamed(sys.fe.url)).status).toBe(200);
  });

  it.each([[0], [1.5], ['500'], [-1]])(
    'answers 400 for ttft_slo_ms %j and changes nothing',
    async (value) => {
      const entry = async () =>
        (await post(`${sys.fe.url}/busy_threshold`, { model: MODEL })).json as Record<
          string,
          unknown
        >;
      const audit = async () =>
        (
          (await (
            await fetch(`${sys.fe.url}/busy_threshold/audit?model=${encodeURIComponent(MODEL)}`)
          ).json()) as {
            entries: unknown[];
          }
        ).entries.length;
      const before = { entry: await entry(), audit: await audit() };
      const res = await setObjective(value);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.json)).toContain('ttft_slo_ms');
      expect({ entry: await entry(), audit: await audit() }).toEqual(before);
    },
  );
});

describe('TTFT objective: the sample of would-be refusals, and the per-model key over the flag', () => {
  const sys = useSystem({
    database: 'slosample',
    reporting: true,
    workers: [['--speedup', '1']],
    // 1 ms: every request is a would-be refusal; all of them are admitted as samples.
    frontend: [
      ...['--admission-control', 'token-capacity'],
      ...['--ttft-slo-ms', '1', '--ttft-slo-sample', '1'],
    ],
    serving: true,
  });
  const missed = () =>
    metric(sys.fe.url, 'sluice_frontend_slo_sample_total', { model: MODEL, outcome: 'missed' });

  /**
   * `n` streamed requests sent while another waits for its first token on the crawling worker.
   * That first one is explored, not sampled (the worker is idle); the `n` are would-be refusals.
   */
  async function whileExplored(n: number): Promise<Array<{ status: number }>> {
    await setSpeedup(sys.worker.url, CRAWL);
    await inflight(sys.fe.url, 0);
    const explored = holdInPrefill(sys.fe.url);
    await inflight(sys.fe.url, 1);
    const sent = Array.from({ length: n }, () => streamed(sys.fe.url));
    await inflight(sys.fe.url, n + 1);
    explored.stop();
    await setSpeedup(sys.worker.url, 1);
    return Promise.all(sent);
  }

  it('admits the sampled would-be refusals and counts whether they met the objective', async () => {
    const before = await missed();
    for (const r of await whileExplored(3)) expect(r.status).toBe(200);
    expect(await missed()).toBe(before + 3);
    expect(
      await metric(sys.fe.url, 'sluice_frontend_slo_sample_total', {
        model: MODEL,
        outcome: 'met',
      }),
    ).toBe(0);
  });

  it('lets a per-model ttft_slo_ms override --ttft-slo-ms, stored and audited; null returns to the flag', async () => {
    const set = await post(`${sys.fe.url}/busy_threshold`, { model: MODEL, ttft_slo_ms: 600000 });
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({ ttft_slo_ms: 600000 });
    const before = await missed();
    // Within the model's own objective: not a would-be refusal, so not a sample.
    for (let i = 0; i < 3; i++) expect((await streamed(sys.fe.url)).status).toBe(200);
    expect(await missed()).toBe(before);
    const [audited] = (
      (await (
        await fetch(`${sys.fe.url}/busy_threshold/audit?model=${encodeURIComponent(MODEL)}`)
      ).json()) as {
        entries: Array<{ before: Record<string, unknown>; after: Record<string, unknown> }>;
      }
    ).entries;
    expect([audited.before.ttft_slo_ms, audited.after.ttft_slo_ms]).toEqual([null, 600000]);

    const cleared = await post(`${sys.fe.url}/busy_threshold`, { model: MODEL, ttft_slo_ms: null });
    expect(cleared.json).toMatchObject({ ttft_slo_ms: 1 });
    expect((await whileExplored(1)).map((r) => r.status)).toEqual([200]);
    expect(await missed()).toBe(before + 1);
  });
});

describe('TTFT objective with the router queue: deadlines', () => {
  let held: (() => void) | undefined;
  let worker: FakeWorker;
  const sys = useSystem({
    database: 'slodeadline',
    bus: true,
    frontend: [
      ...['--admission-control', 'token-capacity', '--ttft-slo-ms', '3000'],
      // One worker stepping 100 tokens: the holder's 204 prompt tokens put it over 1 × 100.
      ...['--router-queue-threshold', '1', '--worker-ttl-ms', '120000'],
    ],
  });

  beforeAll(async () => {
    worker = await FakeWorker.start(
      (_req, res) =>
        new Promise<void>((resolve) => {
          held = () => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end('{"id":"held","choices":[]}');
            resolve();
          };
        }),
    );
    sys.bus.report(sys.fe.namespace, {
      worker_id: 'held',
      endpoint: worker.url,
      kv_total_blocks: 1000,
      active_prefill_tokens: 0,
      max_num_batched_tokens: 100,
    });
    await waitFor(
      async () => (await workers(sys.fe.url)).some((w) => w.worker_id === 'held'),
      'the worker known',
      SETTLED_MS,
    );
  });
  afterAll(() => worker?.stop());

  it('refuses a queued request whose deadline passes, without the worker ever seeing it', async () => {
    // 800 characters: 200 tokens + 4 of chat framing; predicted 20 + 204 ms, within 3 s.
    const holder = post(`${sys.fe.url}/v1/chat/completions`, {
      model: MODEL,
      messages: [{ role: 'user', content: 'x'.repeat(800) }],
      max_tokens: 2,
    });
    await waitFor(() => Promise.resolve(worker.seen.length === 1), 'the holder sent', SETTLED_MS);
    const labels = { model: MODEL, endpoint: 'chat_completions', priority: 'standard' };
    const sloBefore = await metric(sys.fe.url, 'sluice_frontend_slo_rejection_total', labels);

    // Predicted 20 + 204 ahead + 5 ms, within 3 s: it waits (the holder is over the queue's
    // in-flight limit) until it can no longer make its deadline, 2.77 s after it arrived.
    const waiting = post(`${sys.fe.url}/v1/chat/completions`, {
      model: MODEL,
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 2,
    });
    await waitFor(
      async () =>
        (await metric(sys.fe.url, 'dynamo_frontend_queued_requests', { model: MODEL })) === 1,
      'the request queued',
      SETTLED_MS,
    );
    const waiter = await waiting;
    expect(waiter.status).toBe(503);
    expect(waiter.text).toBe(OVERLOAD_BODY);
    expect(await metric(sys.fe.url, 'sluice_frontend_slo_rejection_total', labels)).toBe(
      sloBefore + 1,
    );
    expect(worker.seen).toHaveLength(1);

    held?.();
    expect((await holder).status).toBe(200);
    expect(worker.seen).toHaveLength(1);
  });
});
