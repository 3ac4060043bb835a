import { MODEL } from './support/bus';
import { FakeWorker, sleep } from './support/fake-worker';
import { useSystem } from './support/fixtures';
import { metricValue } from './support/http';
import { waitFor } from './support/processes';

/** Generous: a busy 2-core machine can be slow; speed belongs to the bench. */
const SETTLED_MS = 60_000;
const OBJECTIVE_MS = 100;
const INTERVAL_MS = 1500;
/** The model's shift rule rescales the fit after this many misses in one direction. */
const SHIFT_RUN = 3;

/** One streamed chat completion read to its end. */
async function streamed(base: string): Promise<{ status: number }> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hello there' }],
      max_tokens: 2,
      stream: true,
    }),
  });
  await res.text();
  return { status: res.status };
}

const CHUNK = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 0,
  model: MODEL,
  choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }],
});

/**
 * Exploration of the TTFT objective, bounded: requests sent one after another to a worker whose
 * first token takes 6× the objective are refused once the predictor has learned it, but for one
 * explored request per `--explore-interval-ms`; when the worker speeds up, the explored requests
 * correct the fit and requests are admitted again. Real frontend process, NATS and HTTP; the
 * worker is a test double whose only job is the delay of its first token.
 */
describe('TTFT objective: at most one explored request per worker per interval', () => {
  let firstTokenMs = 600;
  let worker: FakeWorker;
  const sys = useSystem({
    bus: true,
    frontend: [
      ...['--admission-control', 'token-capacity', '--ttft-slo-ms', String(OBJECTIVE_MS)],
      ...['--explore-interval-ms', String(INTERVAL_MS), '--worker-ttl-ms', '600000'],
    ],
  });
  const explored = async (): Promise<number> =>
    (await metricValue(sys.fe.url, 'sluice_frontend_explored_total', { model: MODEL })) ?? 0;

  beforeAll(async () => {
    worker = await FakeWorker.start(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      await sleep(firstTokenMs);
      res.write(`data: ${CHUNK}\n\n`);
      res.end('data: [DONE]\n\n');
    });
    sys.bus.report(sys.fe.namespace, {
      worker_id: 'slow',
      endpoint: worker.url,
      kv_total_blocks: 1000,
      active_prefill_tokens: 0,
    });
    await waitFor(
      async () =>
        (await fetch(`${sys.fe.url}/ui/status.json`)).ok &&
        (await streamed(sys.fe.url)).status === 200,
      'the worker serving',
      SETTLED_MS,
    );
  });
  afterAll(() => worker?.stop());

  it('refuses sequential requests to a worker slower than the objective, but for one explored per interval, and admits again once it is fast', async () => {
    // Learning: admitted until the prediction has seen the worker's speed.
    let learned = 0;
    while ((await streamed(sys.fe.url)).status === 200) {
      learned++;
      expect(learned).toBeLessThanOrEqual(3);
    }

    // Sequential traffic for three intervals: nothing of ours is ever in flight when the next
    // request arrives, so only the interval bounds exploration.
    const before = await explored();
    const started = performance.now();
    let admitted = 0;
    let refused = 0;
    while (performance.now() - started < 3 * INTERVAL_MS) {
      const { status } = await streamed(sys.fe.url);
      if (status === 200) admitted++;
      else {
        expect(status).toBe(503);
        refused++;
      }
      await sleep(20);
    }
    const elapsed = performance.now() - started;
    expect(await explored()).toBe(before + admitted);
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(admitted).toBeLessThanOrEqual(Math.floor(elapsed / INTERVAL_MS) + 1);
    expect(refused).toBeGreaterThan(admitted);

    // The worker speeds up: each explored request's first token is a miss in one direction;
    // after SHIFT_RUN of them that agree the fit is rescaled and requests pass without
    // exploration. 40 ms, not less: a loaded machine's few ms of noise on a 5 ms first token
    // make misses that disagree, and the run starts again.
    firstTokenMs = 40;
    const fromExplored = await explored();
    await waitFor(
      async () => {
        const at = await explored();
        const { status } = await streamed(sys.fe.url);
        return status === 200 && (await explored()) === at;
      },
      'a request admitted without exploration',
      SETTLED_MS,
    );
    expect((await explored()) - fromExplored).toBeLessThanOrEqual(2 * SHIFT_RUN);
    for (let i = 0; i < 3; i++) expect((await streamed(sys.fe.url)).status).toBe(200);
  });
});
