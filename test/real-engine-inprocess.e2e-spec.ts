import {
  CompletionOutcome,
  FrontendStarted,
  LlamaServer,
  metricSamples,
  promptOf,
  sleep,
  startFrontend,
  streamCompletion,
} from '@sluice/testkit';
import { estimateTextTokens } from '@sluice/contracts';
import { useProcesses } from './support/fixtures';
import { NATS_URL, waitFor } from './support/processes';
import { describeRealEngine } from './support/real-engine';

const MODEL = 'micro';
/** A request's answer: 64 tokens, about a second on one core at four slots. */
const TOKENS = 64;
/** The overload 503's message (docs/api.md). */
const BUSY = 'Service temporarily unavailable: All workers are busy, please retry later';

/**
 * Debian's real llama-server behind the frontend's in-process bridge (docs/engines.md). The
 * server runs with `--no-slots`, as servers did by default from late 2024 to mid 2025: the bridge
 * reads its slots from `/props` and `/metrics`.
 */
describeRealEngine('llama.cpp (real llama-server) behind the in-process bridge', () => {
  const group = useProcesses();
  let llama: LlamaServer;
  let fe: FrontendStarted;

  beforeAll(async () => {
    // Windows of 4096 tokens: room for the long requests that hold the engine below.
    llama = await LlamaServer.start({ model: MODEL, context: 16384, args: ['--no-slots'], group });
    fe = await startFrontend({
      natsUrl: NATS_URL,
      group,
      flags: [
        ...['--engine-target', `llamacpp=llama=${llama.url}`],
        ...['--admission-control', 'token-capacity'],
        // Busy when all 4 slots are in use or a request waits for one (docs/engines.md).
        ...['--active-decode-blocks-threshold', '0.75', '--waiting-requests-threshold', '0'],
        // Generous: the objective never refuses here, but the prediction error is measured.
        ...['--ttft-slo-ms', '60000'],
      ],
    });
    await waitFor(
      async () => (await gauge('dynamo_frontend_worker_kv_total_blocks')) === 4,
      'the engine reported',
    );
  }, 180_000);

  const text = async (): Promise<string> => (await fetch(`${fe.url}/metrics`)).text();
  const gauge = async (name: string): Promise<number | undefined> =>
    metricSamples(await text(), name, { worker_id: 'llama' })[0];
  const complete = (tag: string, o: Partial<Parameters<typeof streamCompletion>[1]> = {}) =>
    streamCompletion(fe.url, { model: MODEL, maxTokens: TOKENS, tag, ...o });
  const idle = () =>
    waitFor(async () => {
      const load = await llama.load();
      return (
        load.processing === 0 &&
        load.deferred === 0 &&
        (await gauge('dynamo_frontend_worker_busy')) === 0
      );
    }, 'the engine idle and free');

  it('finds the model from the alias and serves it through the engine', async () => {
    const models = (await (await fetch(`${fe.url}/v1/models`)).json()) as {
      data: { id: string }[];
    };
    expect(models.data.map((m) => m.id)).toContain(MODEL);
    const r = await complete('alias');
    expect(r).toMatchObject({ status: 200, completionTokens: TOKENS, error: null });
  });

  it('maps slots in use and deferred requests: the full engine is busy, and free again after', async () => {
    const hold = new AbortController();
    // Six long requests straight to the engine: four take the slots, two wait for one.
    const held = Array.from({ length: 6 }, (_, i) =>
      streamCompletion(llama.url, {
        model: MODEL,
        maxTokens: 4000,
        tag: `hold ${i}`,
        signal: hold.signal,
      }),
    );
    try {
      await waitFor(async () => {
        const t = await text();
        const one = (name: string) => metricSamples(t, name, { worker_id: 'llama' })[0];
        return (
          one('dynamo_frontend_worker_active_decode_blocks') === 4 &&
          one('sluice_frontend_worker_requests_waiting') === 2 &&
          one('dynamo_frontend_worker_busy') === 1
        );
      }, '4 of 4 slots in use and 2 requests deferred, as the frontend sees them');
      const refused = await complete('refused');
      expect(refused).toMatchObject({ status: 503, message: BUSY });
    } finally {
      hold.abort();
      await Promise.all(held);
    }
    await idle();
    expect(await complete('free again')).toMatchObject({ status: 200, completionTokens: TOKENS });
  });

  it('sheds at 4x its capacity: 503s, every admitted request completes, few wait in the engine', async () => {
    await idle();
    // Capacity: the slots over one request's time alone (a request runs slower beside others,
    // so the offered load is at least 4x what the engine serves).
    const alone = await complete('alone');
    expect(alone.status).toBe(200);
    const perSecond = (4 / (alone.totalMs / 1000)) * 4;
    const n = Math.max(24, Math.min(120, Math.round(perSecond * 3)));
    let maxDeferred = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxDeferred = Math.max(maxDeferred, (await llama.load()).deferred);
        await sleep(50);
      }
    })();
    const sent: Promise<CompletionOutcome>[] = [];
    for (let i = 0; i < n; i++) {
      sent.push(complete(`burst ${i}`));
      await sleep(1000 / perSecond);
    }
    const outcomes = await Promise.all(sent);
    sampling = false;
    await sampler;
    const refused = outcomes.filter((o) => o.status === 503);
    const admitted = outcomes.filter((o) => o.status !== 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((o) => o.message))).toEqual(new Set([BUSY]));
    expect(admitted.length).toBeGreaterThanOrEqual(4);
    for (const o of admitted)
      expect(o).toMatchObject({ status: 200, completionTokens: TOKENS, error: null });
    // Without shedding, every request not in a slot would wait in the engine's queue.
    expect(maxDeferred).toBeLessThanOrEqual(4);
  });

  it("learns the engine's own time to first token: the prediction error is measured", async () => {
    await idle();
    const errors = async () =>
      metricSamples(await text(), 'sluice_frontend_ttft_prediction_error_seconds_count', {
        model: MODEL,
      })[0] ?? 0;
    const before = await errors();
    const ttfts: number[] = [];
    for (let i = 0; i < 8; i++) {
      // About 200 prompt tokens: their prefill, not the seed's 20 ms, is what the engine takes.
      const r = await complete(`learn ${i}`, { promptWords: WORDS, maxTokens: 2 });
      expect(r.status).toBe(200);
      ttfts.push(r.ttftMs ?? NaN);
    }
    expect((await errors()) - before).toBe(8);
    const status = (await (await fetch(`${fe.url}/ui/status.json`)).json()) as {
      models: { model: string; workers: { worker_id: string; ttft_prediction: Prediction }[] }[];
    };
    const p = status.models.find((m) => m.model === MODEL)?.workers[0]?.ttft_prediction;
    expect(p).toMatchObject({ basis: 'learned' });
    expect(p?.observations).toBeGreaterThanOrEqual(8);
    // The fit moved from its seed towards what this engine takes for such a request on an idle
    // engine (the seed: 20 ms, and 100 ms per 8192 prompt tokens; ttft-model.ts).
    const median = [...ttfts].sort((a, b) => a - b)[4];
    const k = estimateTextTokens(promptOf(WORDS, 'learn 0')) / 1000;
    const seed = 20 + (100_000 / 8192) * k;
    const learned = (p?.base_ms ?? NaN) + (p?.ms_per_1k_tokens ?? NaN) * k;
    expect(Math.abs(learned - median)).toBeLessThan(Math.abs(seed - median));
  });
});

/** Prompt words of the requests the TTFT model learns from. */
const WORDS = 100;

interface Prediction {
  basis: string;
  observations: number;
  base_ms: number;
  ms_per_1k_tokens: number;
  ms_at_full_kv: number;
}
