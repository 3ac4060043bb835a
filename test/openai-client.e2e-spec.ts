import OpenAI from 'openai';
import { MODEL, TestBus } from './support/bus';
import {
  FrontendProcess,
  startFrontend,
  startWorker,
  waitFor,
  WorkerProcess,
} from './support/processes';

/** The official `openai` npm client, unchanged, talking to Sluice. */
describe('official openai client through Sluice', () => {
  let bus: TestBus;
  let worker: WorkerProcess;
  let fe: FrontendProcess;
  let client: OpenAI;

  beforeAll(async () => {
    bus = await TestBus.connect();
    worker = await startWorker();
    fe = await startFrontend([
      '--admission-control',
      'token-capacity',
      '--active-decode-blocks-threshold',
      '0.9',
    ]);
    client = new OpenAI({ baseURL: `${fe.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    bus.report(fe.namespace, { worker_id: 'oa', endpoint: worker.url, active_decode_blocks: 10 });
    await waitFor(
      async () => (await client.models.list()).data.some((m) => m.id === MODEL),
      'model listed',
    );
  });

  afterAll(async () => {
    await Promise.all([fe?.proc.stop(), worker?.proc.stop()]);
    await bus?.close();
  });

  it('completes a non-streaming chat request with usage', async () => {
    const res = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Say something deterministic.' }],
      max_tokens: 8,
    });
    expect(res.object).toBe('chat.completion');
    expect(res.choices[0].message.role).toBe('assistant');
    expect(res.choices[0].message.content?.length).toBeGreaterThan(0);
    expect(res.usage?.completion_tokens).toBe(8);
    expect(res.usage?.total_tokens).toBe((res.usage?.prompt_tokens ?? 0) + 8);
  });

  it('streams a chat completion chunk by chunk', async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Stream please.' }],
      max_tokens: 6,
      stream: true,
    });
    let text = '';
    let chunks = 0;
    let finish: string | null = null;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(chunks).toBeGreaterThanOrEqual(6);
    expect(text.length).toBeGreaterThan(0);
    expect(finish).toBe('length');
  });

  it('sees a rejection as a 503 APIError carrying the contract body', async () => {
    bus.report(fe.namespace, { worker_id: 'oa', endpoint: worker.url, active_decode_blocks: 95 });
    await waitFor(async () => {
      try {
        await client.chat.completions.create({
          model: MODEL,
          messages: [{ role: 'user', content: 'x' }],
        });
        return false;
      } catch (err) {
        return err instanceof OpenAI.APIError && err.status === 503 ? err : false;
      }
    }, 'a 503').then((err) => {
      expect(err).toBeInstanceOf(OpenAI.InternalServerError);
      expect(err.headers?.get('retry-after')).toBe('1');
      // Contract §3.1's body is top-level {message,type,code} (Dynamo's shape), not OpenAI's
      // {error:{…}}, so the SDK finds no `error` object and reports only the status.
      expect(err.status).toBe(503);
      expect(err.message).toMatch(/^503\b/);
    });
    bus.report(fe.namespace, { worker_id: 'oa', endpoint: worker.url, active_decode_blocks: 10 });
  });
});
