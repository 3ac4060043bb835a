import OpenAI from 'openai';
import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { waitFor } from './support/processes';

/** The official `openai` npm client, unchanged, talking to Sluice. */
describe('official openai client through Sluice', () => {
  const sys = useSystem({
    bus: true,
    workers: [[]],
    frontend: ['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.9'],
  });
  let client: OpenAI;

  beforeAll(async () => {
    client = new OpenAI({ baseURL: `${sys.fe.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    sys.bus.report(sys.fe.namespace, {
      worker_id: 'oa',
      endpoint: sys.worker.url,
      active_decode_blocks: 10,
    });
    await waitFor(
      async () => (await client.models.list()).data.some((m) => m.id === MODEL),
      'model listed',
    );
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
    sys.bus.report(sys.fe.namespace, {
      worker_id: 'oa',
      endpoint: sys.worker.url,
      active_decode_blocks: 95,
    });
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
      // docs/api.md#errors's body is top-level {message,type,code} (Dynamo's shape), not OpenAI's
      // {error:{…}}, so the SDK finds no `error` object and reports only the status.
      expect(err.status).toBe(503);
      expect(err.message).toMatch(/^503\b/);
    });
    sys.bus.report(sys.fe.namespace, {
      worker_id: 'oa',
      endpoint: sys.worker.url,
      active_decode_blocks: 10,
    });
  });
});
