import { MockAgent } from 'undici';
import { SluiceOverloadedError, SluiceStreamError } from './client.errors';
import { ChatCompletionChunk } from './openai.types';
import { SluiceClient } from './sluice.client';

const ORIGIN = 'http://sluice.test';
const chunk = (content: string) =>
  `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

function frontend(
  replies: Array<{ status: number; body: string; headers?: Record<string, string> }>,
) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const bodies: unknown[] = [];
  agent
    .get(ORIGIN)
    .intercept({ path: '/v1/chat/completions', method: 'POST' })
    .reply((opts) => {
      bodies.push(JSON.parse(opts.body as string));
      const r = replies.length > 1 ? replies.shift()! : replies[0];
      return { statusCode: r.status, data: r.body, responseOptions: { headers: r.headers } };
    })
    .persist();
  const sut = new SluiceClient({
    baseUrl: ORIGIN,
    dispatcher: agent,
    sleep: () => Promise.resolve(),
  });
  return { sut, bodies };
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>) {
  const texts: string[] = [];
  for await (const c of stream) texts.push(String(c.choices[0].delta.content));
  return texts;
}
const req = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

describe('SluiceClient streaming', () => {
  it('retries an overload before the stream starts, then yields chunks up to [DONE]', async () => {
    const { sut, bodies } = frontend([
      { status: 503, body: '{"message":"busy","type":"service_unavailable","code":503}' },
      { status: 200, body: chunk('Hel') + chunk('lo') + 'data: [DONE]\n\n' + chunk('after') },
    ]);
    const stream = await sut.chatCompletionsStream(req);
    expect(stream.status).toBe(200);
    expect(await collect(stream)).toEqual(['Hel', 'lo']);
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toMatchObject({ stream: true, model: 'm' });
  });

  it('throws the overload before any chunk when the attempts run out', async () => {
    const { sut, bodies } = frontend([
      { status: 503, body: '{"message":"busy","type":"service_unavailable","code":503}' },
    ]);
    await expect(sut.chatCompletionsStream(req)).rejects.toBeInstanceOf(SluiceOverloadedError);
    expect(bodies).toHaveLength(4);
  });

  it('does not retry once the stream has started: a mid-stream error is thrown', async () => {
    const error = {
      message: 'Worker w-1 failed: socket closed',
      type: 'upstream_error',
      code: 502,
    };
    const { sut, bodies } = frontend([
      { status: 200, body: chunk('a') + `data: ${JSON.stringify({ error })}\n\n` },
    ]);
    const texts: string[] = [];
    const failed = collect({
      async *[Symbol.asyncIterator]() {
        for await (const c of await sut.chatCompletionsStream(req)) {
          texts.push(String(c.choices[0].delta.content));
          yield c;
        }
      },
    });
    await expect(failed).rejects.toThrow(new SluiceStreamError(error.message));
    expect(texts).toEqual(['a']);
    expect(bodies).toHaveLength(1);
  });

  it('reports a stream cut before [DONE]', async () => {
    const { sut } = frontend([{ status: 200, body: chunk('a') }]);
    const stream = await sut.chatCompletionsStream(req);
    await expect(collect(stream)).rejects.toThrow('the stream ended before data: [DONE]');
  });

  it('can be read once', async () => {
    const { sut } = frontend([{ status: 200, body: 'data: [DONE]\n\n' }]);
    const stream = await sut.chatCompletionsStream(req);
    expect(await collect(stream)).toEqual([]);
    await expect(collect(stream)).rejects.toThrow('read only once');
  });
});
