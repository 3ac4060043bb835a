import { connect, NatsConnection } from 'nats';
import {
  FrontendStarted,
  LlamaServer,
  metricSamples,
  startBridge,
  startFrontend,
  streamCompletion,
  uniqueNamespace,
} from '@sluice/testkit';
import { useProcesses } from './support/fixtures';
import { NATS_URL, waitFor } from './support/processes';
import { describeRealEngine } from './support/real-engine';

const MODEL = 'micro';
const DOWN_AFTER_MS = 1000;

interface Heard {
  subject: string;
  payload: Record<string, unknown>;
  at: number;
}

/**
 * Debian's real llama-server behind the standalone bridge over NATS (docs/engines.md): the
 * reports it publishes, worker_down when the server dies and reports again when it is back, and
 * a unified KV cache counted in tokens.
 */
describeRealEngine('llama.cpp (real llama-server) behind the standalone bridge', () => {
  const group = useProcesses();
  const namespace = uniqueNamespace('llama');
  const heard: Heard[] = [];
  let nc: NatsConnection;
  let llama: LlamaServer;
  let unified: LlamaServer;
  let fe: FrontendStarted;

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL, name: 'real-engine-e2e' });
    const sub = nc.subscribe(`namespace.${namespace}.>`);
    void (async () => {
      for await (const m of sub)
        heard.push({ subject: m.subject, payload: m.json(), at: Date.now() });
    })();
    await nc.flush();
    [llama, unified] = await Promise.all([
      LlamaServer.start({ model: MODEL, group }),
      // One cache of 2048 tokens shared by 4 slots.
      LlamaServer.start({
        model: MODEL,
        context: 2048,
        args: ['--kv-unified'],
        alias: 'micro-unified',
        group,
      }),
    ]);
    const common = ['--engine', 'llamacpp', '--scrape-interval-ms', '100'];
    await Promise.all([
      startBridge({
        natsUrl: NATS_URL,
        namespace,
        group,
        flags: [
          ...common,
          '--target',
          `llama=${llama.url}`,
          '--down-after-ms',
          String(DOWN_AFTER_MS),
        ],
      }),
      startBridge({
        natsUrl: NATS_URL,
        namespace,
        group,
        flags: [...common, '--target', `unified=${unified.url}`, '--llamacpp-kv-cache', 'unified'],
      }),
    ]);
    fe = await startFrontend({
      natsUrl: NATS_URL,
      namespace,
      group,
      flags: ['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.5'],
    });
  }, 180_000);

  afterAll(async () => {
    await nc?.drain();
  });

  const reports = (workerId: string) =>
    heard
      .filter((h) => h.subject.endsWith('.kv_metrics') && h.payload.worker_id === workerId)
      .map((h) => h.payload);
  const downs = (workerId: string) =>
    heard.filter((h) => h.subject.endsWith('.worker_down') && h.payload.worker_id === workerId);
  const workerGauge = async (name: string, workerId: string) =>
    metricSamples(await (await fetch(`${fe.url}/metrics`)).text(), name, {
      worker_id: workerId,
    })[0];

  it('publishes the slots under the model named by the alias, and the frontend serves it', async () => {
    const first = await waitFor(() => reports('llama')[0], 'a report of the llama.cpp server');
    expect(first).toMatchObject({
      model: MODEL,
      endpoint: llama.url,
      kv_total_blocks: 4,
      active_decode_blocks: 0,
      kv_block_size: 2048,
      num_requests_waiting: 0,
    });
    await waitFor(
      async () => (await workerGauge('dynamo_frontend_worker_kv_total_blocks', 'llama')) === 4,
      'the frontend knows the engine',
    );
    const r = await streamCompletion(fe.url, { model: MODEL, maxTokens: 16, tag: 'alias' });
    expect(r).toMatchObject({ status: 200, completionTokens: 16, error: null });
  });

  it('with a unified cache, counts the tokens the slots hold: one long request makes it busy', async () => {
    await waitFor(() => reports('unified')[0], 'a report of the unified server');
    expect(reports('unified')[0]).toMatchObject({
      model: 'micro-unified',
      kv_total_blocks: 2048,
      kv_block_size: 1,
    });
    const hold = new AbortController();
    // About 1300 prompt tokens in one slot of four: over half the cache, a quarter of the slots.
    const long = streamCompletion(unified.url, {
      model: 'micro-unified',
      promptWords: 650,
      maxTokens: 600,
      tag: 'long',
      signal: hold.signal,
    });
    try {
      const busy = await waitFor(
        () => reports('unified').find((r) => (r.active_decode_blocks as number) > 1024),
        'a report of more than half the cache in use',
      );
      expect(busy.kv_total_blocks).toBe(2048);
      await waitFor(
        async () => (await workerGauge('dynamo_frontend_worker_busy', 'unified')) === 1,
        'the frontend judges it busy',
      );
      const refused = await streamCompletion(fe.url, {
        model: 'micro-unified',
        maxTokens: 4,
        tag: 'x',
      });
      expect(refused.status).toBe(503);
    } finally {
      hold.abort();
      await long;
    }
    await waitFor(
      async () => (await workerGauge('dynamo_frontend_worker_busy', 'unified')) === 0,
      'free once the request is gone',
    );
  });

  it('publishes worker_down when the server dies, and reports again once it is back', async () => {
    await waitFor(() => reports('llama').length > 0, 'reports');
    const killedAt = Date.now();
    await llama.stop();
    const down = await waitFor(() => downs('llama')[0], 'worker_down', 30_000);
    // Not before the engine stopped answering for --down-after-ms.
    expect(down.at - killedAt).toBeGreaterThanOrEqual(DOWN_AFTER_MS - 100);
    await waitFor(
      async () =>
        (await workerGauge('dynamo_frontend_worker_kv_total_blocks', 'llama')) === undefined,
      'the frontend forgets the engine',
    );
    const gone = await streamCompletion(fe.url, { model: MODEL, maxTokens: 4, tag: 'gone' });
    expect(gone.status).toBe(503);

    const seen = reports('llama').length;
    await llama.restart();
    const back = await waitFor(
      () => reports('llama').slice(seen)[0],
      'a report after the restart',
      60_000,
    );
    expect(back).toMatchObject({ model: MODEL, kv_total_blocks: 4 });
    expect(back.seq as number).toBeGreaterThan(reports('llama')[seen - 1].seq as number);
    await waitFor(
      async () => (await workerGauge('dynamo_frontend_worker_kv_total_blocks', 'llama')) === 4,
      'the frontend knows it again',
    );
    const r = await streamCompletion(fe.url, { model: MODEL, maxTokens: 8, tag: 'back' });
    expect(r).toMatchObject({ status: 200, completionTokens: 8 });
  });
});
