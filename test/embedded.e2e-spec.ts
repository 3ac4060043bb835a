import { useEmbedded } from './support/fixtures';
import { chat, metricValue } from './support/http';
import { spawnApp, tempDataDir, waitFor } from './support/processes';

const MODEL = 'Qwen/Qwen3-0.6B';

/** `npm start`: the whole system in one process, no NATS and no database server. */
describe('embedded system (npm start)', () => {
  // An empty data directory, as on a first `npm start`: the system creates its database.
  const sys = useEmbedded({
    flags: ['--data-dir', tempDataDir()],
    env: { SLUICE_EMBEDDED_WORKER_FLAGS: '--speedup 0' },
  });

  afterAll(async () => {
    // A clean exit on SIGTERM.
    expect(await sys.proc?.stop()).toBe(0);
  });

  it('lists Qwen/Qwen3-0.6B once its simulated workers report', async () => {
    const models = await waitFor(async () => {
      const body = (await (await fetch(`${sys.url}/v1/models`)).json()) as {
        data: Array<{ id: string }>;
      };
      return body.data.length > 0 ? body : undefined;
    }, 'models listed');
    expect(models.data.map((m) => m.id)).toEqual([MODEL]);
  });

  it('answers a chat completion with OpenAI-shaped JSON and usage', async () => {
    const res = await chat(sys.url, { max_tokens: 5 });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      object: 'chat.completion',
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'length' }],
      usage: { completion_tokens: 5 },
    });
  });

  it('streams SSE chunks ending in data: [DONE]', async () => {
    const res = await chat(sys.url, { max_tokens: 4, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = res.text.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events
      .slice(0, -1)
      .map((e) => JSON.parse(e.replace(/^data: /, '')) as { object: string });
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
  });

  it('reports both workers in its metrics', async () => {
    for (const id of ['embedded-worker-1', 'embedded-worker-2']) {
      expect(
        await metricValue(sys.url, 'dynamo_frontend_worker_kv_total_blocks', { worker_id: id }),
      ).toBe(16384);
    }
  });
});

describe('embedded system under overload with token-capacity', () => {
  const sys = useEmbedded({
    flags: ['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.5'],
    env: { SLUICE_EMBEDDED_WORKER_FLAGS: '--kv-total-blocks 512 --speedup 4' },
  });

  it('sheds with 503s while the KV caches are full, and stops once the load ends', async () => {
    const load = spawnApp('loadgen', [
      '--url',
      sys.url,
      '--rate',
      '150',
      '--duration',
      '4',
      '--prompt-tokens',
      '200',
      '--max-tokens',
      '100',
      '--drain-timeout',
      '30',
      '--json',
      '--quiet',
    ]);
    expect(await load.exited).toBe(0);
    const summary = JSON.parse(load.output.trim().split('\n').at(-1) as string) as Record<
      string,
      number
    >;
    expect(summary.sent).toBe(600);
    expect(summary.rejected_503).toBeGreaterThan(0);
    expect(summary.ok_200).toBeGreaterThan(0);
    expect(summary.other_errors).toBe(0);
    expect(summary.ok_200 + summary.rejected_503).toBe(summary.sent);
    const rejections = await metricValue(sys.url, 'dynamo_frontend_model_rejection_total', {
      model: MODEL,
      endpoint: 'chat_completions',
    });
    expect(rejections).toBe(summary.rejected_503);
    // The load is over and drained: the caches empty and requests are admitted again.
    await waitFor(
      async () => (await chat(sys.url)).status === 200,
      'admission after the load',
      30_000,
    );
    for (let i = 0; i < 5; i++) expect((await chat(sys.url)).status).toBe(200);
  });
});
