import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { waitFor } from './support/processes';

/** The number docs/architecture.md states: the shift rule needs this many requests (SHIFT_RUN). */
const REQUESTS_TO_ADAPT = 3;

/**
 * 6,384 characters: 1,596 tokens + 4 of chat framing. A long prompt on a worker at its real speed
 * (`--speedup 1`, then 0.1), so that the slowed worker's first token (one 1,600-token step:
 * ~420 ms) dwarfs the tens, now and then hundreds, of milliseconds a process waits for a CPU on a
 * busy machine: with 400 tokens at speedup 2 then 0.2 (~115 ms) the 20 % bound below failed 2
 * runs in 6 beside the browser test, at ~210 ms 2 in 3.
 */
const CONTENT = 'x'.repeat(6384);
const PROMPT_TOKENS = 1600;

interface Prediction {
  predicted_ms: number;
  basis: 'seed' | 'learned';
  base_ms: number;
  ms_per_1k_tokens: number;
  ms_at_full_kv: number;
  tokens_ahead: number;
  kv_usage: number;
  observations: number;
}

/**
 * The TTFT predictor against a real frontend, real NATS and a real simulated worker that reports
 * its own load: the worker turns ten times slower while it runs (`PUT /sim/speedup`), and the
 * frontend's prediction for it, read from the status page, follows within the documented number
 * of requests.
 */
describe('TTFT prediction of a worker that slows down mid-run', () => {
  const sys = useSystem({
    reporting: true,
    workers: [['--speedup', '1', '--worker-id', 'slows']],
    frontend: [],
    serving: true,
  });

  async function prediction(): Promise<Prediction> {
    const status = (await (await fetch(`${sys.fe.url}/ui/status.json`)).json()) as {
      models: Array<{ workers: Array<{ worker_id: string; ttft_prediction: Prediction }> }>;
    };
    const worker = status.models.flatMap((m) => m.workers).find((w) => w.worker_id === 'slows');
    if (!worker) throw new Error('worker slows not listed');
    return worker.ttft_prediction;
  }

  /** What the model predicts for this test's prompt: a + b × (tokens ahead + prompt) / 1000 + c × k. */
  const forPrompt = (p: Prediction): number =>
    p.base_ms +
    (p.ms_per_1k_tokens * (p.tokens_ahead + PROMPT_TOKENS)) / 1000 +
    p.ms_at_full_kv * p.kv_usage;

  /** One streamed request, read to its end; answers its time to first token at the client. */
  async function streamed(): Promise<number> {
    const started = performance.now();
    const res = await fetch(`${sys.fe.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: 'user', content: CONTENT }],
        max_tokens: 2,
        stream: true,
      }),
    });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let ttft: number | undefined;
    for (;;) {
      const { done } = await reader.read();
      ttft ??= performance.now() - started;
      if (done) return ttft;
    }
  }

  /** Each request alone on the worker: nothing ahead of it once the worker reports idle again. */
  async function sequential(n: number): Promise<number[]> {
    const ttfts: number[] = [];
    for (let i = 0; i < n; i++) {
      ttfts.push(await streamed());
      await waitFor(async () => (await prediction()).tokens_ahead === 0, 'worker idle', 60_000);
    }
    return ttfts;
  }

  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

  it(`predicts the worker ${REQUESTS_TO_ADAPT} requests after it turned 10 times slower`, async () => {
    const seeded = await prediction();
    await sequential(10);
    const fast = await prediction();
    expect(fast.basis).toBe('learned');
    expect(fast.observations - seeded.observations).toBe(10);

    const slowed = await fetch(`${sys.worker.url}/sim/speedup`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ speedup: 0.1 }),
    });
    expect(slowed.status).toBe(200);
    await sequential(REQUESTS_TO_ADAPT);
    const slow = await prediction();

    // Measured afterwards at the client, which sees a little more than the frontend does.
    const actual = median(await sequential(5));
    expect(forPrompt(slow)).toBeGreaterThan(3 * forPrompt(fast));
    expect(Math.abs(forPrompt(slow) - actual) / actual).toBeLessThanOrEqual(0.2);
  });
});
