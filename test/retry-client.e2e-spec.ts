import { SluiceClient, SluiceOverloadedError } from '@sluice/client';
import { Dispatcher, Pool } from 'undici';
import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { metricValue } from './support/http';
import { waitFor } from './support/processes';

const REJECTIONS = 'dynamo_frontend_model_rejection_total';
const CHAT_LABELS = { model: MODEL, endpoint: 'chat_completions' };
const BUSY = 90; // of kv_total_blocks 100: above the 0.5 threshold
const FREE = 10;

/** `@sluice/client` against a real frontend and a real simulated worker over real NATS. */
describe('retrying client through Sluice', () => {
  const sys = useSystem({
    bus: true,
    workers: [[]],
    frontend: [
      ...['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.5'],
      ...['--retry-after-secs', '1'],
    ],
  });
  let decodeBlocks = FREE;
  let heartbeat: NodeJS.Timeout;

  const report = (blocks: number): void => {
    decodeBlocks = blocks;
    sys.bus.report(sys.fe.namespace, {
      worker_id: 'rc',
      endpoint: sys.worker.url,
      active_decode_blocks: blocks,
    });
  };
  const rejections = async (): Promise<number> =>
    (await metricValue(sys.fe.url, REJECTIONS, CHAT_LABELS)) ?? 0;
  const ask = (client: SluiceClient) =>
    client.chatCompletions({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hello there' }],
      max_tokens: 4,
    });

  /** A client whose dispatcher records when each attempt is sent. */
  function recordingClient(): { client: SluiceClient; sentAt: number[]; pool: Pool } {
    const pool = new Pool(sys.fe.url);
    const sentAt: number[] = [];
    const record: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
      sentAt.push(performance.now());
      return dispatch(opts, handler);
    };
    const client = new SluiceClient({ baseUrl: sys.fe.url, dispatcher: pool.compose(record) });
    return { client, sentAt, pool };
  }

  /** Reports the worker busy and waits until the frontend sheds (one probe, no retries). */
  async function becomeBusy(): Promise<void> {
    report(BUSY);
    const probe = new SluiceClient({ baseUrl: sys.fe.url, retry: { maxAttempts: 1 } });
    await waitFor(
      () =>
        ask(probe).then(
          () => false,
          (err) => err instanceof SluiceOverloadedError,
        ),
      'the worker to be busy',
    );
    await probe.close();
  }

  beforeAll(async () => {
    report(FREE);
    // The worker publishes nothing itself; keep its state alive well within --worker-ttl-ms.
    heartbeat = setInterval(() => report(decodeBlocks), 500);
    const client = new SluiceClient({ baseUrl: sys.fe.url });
    await waitFor(
      async () => (await client.models()).data.some((m) => m.id === MODEL),
      'model listed',
    );
    await client.close();
  });

  afterEach(() => report(FREE));

  afterAll(() => clearInterval(heartbeat));

  it('makes exactly maxAttempts requests, at least Retry-After apart, then throws', async () => {
    await becomeBusy();
    const { client, sentAt, pool } = recordingClient();
    const before = await rejections();

    const err = await ask(client).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(SluiceOverloadedError);
    expect(err).toMatchObject({
      status: 503,
      retryAfter: 1,
      attempts: 4,
      budgetExhausted: false,
      type: 'service_unavailable',
      message: 'Service temporarily unavailable: All workers are busy, please retry later',
    });
    expect((await rejections()) - before).toBe(4);
    expect(sentAt).toHaveLength(4);
    const gaps = sentAt.slice(1).map((t, i) => t - sentAt[i]);
    // Retry-After: 1 is a floor under the jittered backoff (allow a timer tick of rounding).
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(995);
    await client.close();
    await pool.close();
  });

  it('succeeds with a completion when the worker frees up during the retries', async () => {
    await becomeBusy();
    const { client, sentAt, pool } = recordingClient();
    const before = await rejections();
    const freeUp = setTimeout(() => report(FREE), 1500);

    const res = await ask(client).finally(() => clearTimeout(freeUp));

    expect(res.object).toBe('chat.completion');
    expect(res.choices[0].message.content?.length).toBeGreaterThan(0);
    expect(res.usage?.completion_tokens).toBe(4);
    const rejected = (await rejections()) - before;
    expect(rejected).toBeGreaterThanOrEqual(1);
    expect(sentAt).toHaveLength(rejected + 1);
    // the attempt that succeeded went out after the free report (sent 1.5 s in)
    expect(sentAt[sentAt.length - 1] - sentAt[0]).toBeGreaterThanOrEqual(1400);
    await client.close();
    await pool.close();
  });

  it('serves the other endpoints and streams up to [DONE]', async () => {
    const client = new SluiceClient({ baseUrl: sys.fe.url });
    const text = await client.completions({ model: MODEL, prompt: 'Once upon', max_tokens: 3 });
    expect(text.choices[0].text.length).toBeGreaterThan(0);
    const emb = await client.embeddings({ model: MODEL, input: ['a', 'b'] });
    expect(emb.data.map((d) => d.index)).toEqual([0, 1]);

    const stream = await client.chatCompletionsStream({
      model: MODEL,
      messages: [{ role: 'user', content: 'Stream please.' }],
      max_tokens: 6,
    });
    let content = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(content.length).toBeGreaterThan(0);
    expect(finish).toBe('length');
    await client.close();
  });
});
