import { metricSamples, MODEL, OVERLOAD_BODY } from '@sluice/testkit';
import { useProcesses, useSystem } from './support/fixtures';
import { chat } from './support/http';
import {
  NATS_URL,
  startBridge,
  startEmbedded,
  startWorker,
  waitFor,
  WorkerProcess,
} from './support/processes';

/**
 * Issue 10, "Done when": stock-engine formats behind Sluice. A real simulated worker serves its
 * live state only in vLLM's or SGLang's format (it publishes nothing itself); the engine bridge
 * scrapes it — inside the frontend over the embedded bus (no NATS at all), or as its own process
 * on real NATS in front of two frontend replicas — and the frontend sheds on what it scraped.
 */

/** 200 KV blocks of 16 tokens: one ~2,000-token prompt holds ~63 % of the cache. */
const WORKER_FLAGS = ['--kv-total-blocks', '200', '--block-size', '16', '--speedup', '1'];
const SHED = ['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.5'];
const DEADLINE_MS = 30_000;

/** A long streaming request that fills most of the worker's KV cache until aborted. */
async function holdCache(base: string): Promise<AbortController> {
  const abort = new AbortController();
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: 'user', content: 'x'.repeat(8000) }],
      max_tokens: 1000,
      stream: true,
    }),
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body?.getReader();
  await reader?.read(); // the first event: the prompt is in the cache
  // Keep reading in the background so the stream flows until the test aborts it.
  void (async () => {
    try {
      while (reader && !(await reader.read()).done);
    } catch {
      // aborted
    }
  })();
  return abort;
}

/** The cache fills → the overload 503 of the contract; it empties → 200 again. */
async function expectShedAndRecover(frontends: string[], worker: string): Promise<void> {
  for (const fe of frontends) expect((await chat(fe)).status).toBe(200);
  const hold = await holdCache(worker);
  try {
    for (const fe of frontends) {
      const refused = await waitFor(
        async () => {
          const a = await chat(fe);
          return a.status === 503 ? a : undefined;
        },
        `503 from ${fe}`,
        DEADLINE_MS,
      );
      expect(refused.text).toBe(OVERLOAD_BODY);
      expect(refused.headers.get('retry-after')).toBe('1');
    }
  } finally {
    hold.abort();
  }
  for (const fe of frontends) {
    await waitFor(async () => (await chat(fe)).status === 200, `200 again from ${fe}`, DEADLINE_MS);
  }
}

async function sample(
  base: string,
  name: string,
  labels: Record<string, string>,
): Promise<number | undefined> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return metricSamples(text, name, labels)[0];
}

describe('engine bridge in the frontend (--engine-target, no NATS)', () => {
  const procs = useProcesses('each');

  /** `npm start` with an engine target: the embedded system, no NATS, no simulated workers. */
  async function embedded(flags: string[]): Promise<string> {
    const { proc, url } = await startEmbedded({
      flags,
      ready: /sluice: ready at .* with engines scraped in-process/,
      group: procs,
    });
    expect(proc.output).not.toMatch(/simulated workers/);
    return url;
  }

  async function engineWorker(format: string, extra: string[] = []): Promise<WorkerProcess> {
    const worker = await startWorker(['--metrics-format', format, ...WORKER_FLAGS, ...extra]);
    procs.add(worker.proc);
    return worker;
  }

  it.each(['vllm', 'sglang'])(
    'sheds on a %s-format worker scraped in-process, and stops shedding when it frees up',
    async (engine) => {
      const worker = await engineWorker(engine);
      const fe = await embedded(['--engine-target', `${engine}=sim=${worker.url}`, ...SHED]);
      await waitFor(
        async () => (await (await fetch(`${fe}/v1/models`)).text()).includes(MODEL),
        'the scraped worker is listed',
        DEADLINE_MS,
      );
      await expectShedAndRecover([fe], worker.url);
      expect(
        await sample(fe, 'sluice_bridge_scrapes_total', { worker_id: 'sim', result: 'ok' }),
      ).toBeGreaterThan(0);
      expect(
        await sample(fe, 'sluice_bridge_report_age_seconds', { worker_id: 'sim' }),
      ).toBeGreaterThanOrEqual(0);
    },
  );

  it("tracks each vLLM engine (data-parallel rank) of one server as the worker's ranks", async () => {
    const worker = await engineWorker('vllm', ['--dp-size', '2']);
    const fe = await embedded(['--engine-target', `vllm=dp=${worker.url}`]);
    await waitFor(
      async () =>
        (await sample(fe, 'dynamo_frontend_worker_kv_total_blocks', {
          worker_id: 'dp',
          dp_rank: '1',
        })) === 200,
      'rank 1 of worker dp',
      DEADLINE_MS,
    );
    expect(
      await sample(fe, 'dynamo_frontend_worker_kv_total_blocks', { worker_id: 'dp', dp_rank: '0' }),
    ).toBe(200);
  });
});

describe('standalone engine bridge on NATS, two frontend replicas', () => {
  const one = useSystem({
    workers: [['--metrics-format', 'vllm', ...WORKER_FLAGS]],
    frontend: SHED,
  });
  const two = useSystem({ namespace: one.namespace, frontend: SHED });

  it('feeds both replicas: each sheds while the vLLM worker is full and admits when it frees up', async () => {
    const worker = one.worker;
    const bridge = await startBridge({
      natsUrl: NATS_URL,
      namespace: one.namespace,
      flags: ['--engine', 'vllm', '--target', `sim=${worker.url}`],
      group: one.group,
    });
    const urls = [one.fe.url, two.fe.url];
    for (const fe of urls) {
      await waitFor(
        async () => (await (await fetch(`${fe}/v1/models`)).text()).includes(MODEL),
        `the bridged worker listed by ${fe}`,
        DEADLINE_MS,
      );
    }
    await expectShedAndRecover(urls, worker.url);
    const bridgeUrl = bridge.url;
    expect((await fetch(`${bridgeUrl}/health`)).status).toBe(200);
    expect(
      await sample(bridgeUrl, 'sluice_bridge_scrapes_total', { worker_id: 'sim', result: 'ok' }),
    ).toBeGreaterThan(0);
    // SIGTERM: the bridge says the worker is gone, and both replicas forget it.
    expect(await bridge.proc.stop()).toBe(0);
    for (const fe of urls) {
      await waitFor(
        async () => (await chat(fe)).status === 503,
        `${fe}: no worker after the bridge left`,
        DEADLINE_MS,
      );
      expect((await chat(fe)).text).toContain(`No workers available for model '${MODEL}'`);
    }
  });
});
