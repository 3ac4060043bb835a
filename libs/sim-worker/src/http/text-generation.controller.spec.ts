import { Logger } from '@nestjs/common';
import { estimatePromptTokens } from '@sluice/contracts';
import { parseWorkerFlags } from '../config/worker-flags.parser';
import { createWorkerApp, WorkerApp } from '../worker-app.factory';

interface Choice {
  index: number;
  message?: { role: string; content: string };
  delta?: { role?: string; content?: string };
  text?: string;
  finish_reason: string | null;
}

interface Completion {
  id: string;
  object: string;
  choices: Choice[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

async function json<T>(response: Response | Promise<Response>): Promise<T> {
  return (await (await response).json()) as T;
}

async function post(worker: WorkerApp, path: string, body: unknown): Promise<Response> {
  return fetch(`${worker.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The `data:` payloads of an SSE body, in order. */
function events(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice('data: '.length));
}

const chat = { messages: [{ role: 'user', content: 'Tell me about sluice gates.' }] };

describe('chat and text completions (speedup 0)', () => {
  let worker: WorkerApp;

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    worker = await createWorkerApp(parseWorkerFlags(['--port', '0', '--speedup', '0']), null);
  });

  afterAll(() => worker.close());

  it('answers a chat completion with max_tokens words, finish_reason length and usage', async () => {
    const res = await post(worker, '/v1/chat/completions', { ...chat, max_tokens: 7 });
    expect(res.status).toBe(200);
    const body = await json<Completion>(res);
    const promptTokens = estimatePromptTokens(chat);
    expect(body).toEqual({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'Qwen/Qwen3-0.6B',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: expect.any(String) },
          logprobs: null,
          finish_reason: 'length',
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: 7,
        total_tokens: promptTokens + 7,
      },
    });
    expect(body.choices[0].message?.content.split(' ')).toHaveLength(7);
    const again = await json<Completion>(
      post(worker, '/v1/chat/completions', { ...chat, max_tokens: 7 }),
    );
    expect(again.choices[0].message?.content).toBe(body.choices[0].message?.content);
  });

  it('writes 64 tokens and stops when the client sets no limit', async () => {
    const body = await json<Completion>(post(worker, '/v1/chat/completions', chat));
    expect(body.usage?.completion_tokens).toBe(64);
    expect(body.choices[0].finish_reason).toBe('stop');
  });

  it('streams one chat chunk per token, then finish, usage and [DONE]', async () => {
    const res = await post(worker, '/v1/chat/completions', {
      ...chat,
      max_tokens: 5,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const data = events(await res.text());
    expect(data).toHaveLength(5 + 2 + 1);
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Completion);
    expect(chunks[0].object).toBe('chat.completion.chunk');
    expect(chunks[0].choices[0].delta).toEqual({
      role: 'assistant',
      content: expect.any(String),
    });
    expect(chunks[1].choices[0].delta).toEqual({ content: expect.stringMatching(/^ /) });
    expect(chunks[5].choices[0]).toMatchObject({ delta: {}, finish_reason: 'length' });
    expect(chunks[6]).toMatchObject({ choices: [], usage: { completion_tokens: 5 } });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it('streams text completions as text_completion chunks', async () => {
    const res = await post(worker, '/v1/completions', {
      prompt: 'Once',
      max_tokens: 3,
      stream: true,
    });
    const data = events(await res.text());
    expect(data).toHaveLength(3 + 1 + 1);
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Completion);
    expect(chunks.map((c) => c.object)).toEqual(Array(4).fill('text_completion'));
    expect(chunks[3].choices[0]).toMatchObject({ text: '', finish_reason: 'length' });
  });

  it('answers a text completion with 16 tokens by default', async () => {
    const body = await json<Completion>(
      post(worker, '/v1/completions', { prompt: 'Once upon a time' }),
    );
    expect(body).toMatchObject({
      object: 'text_completion',
      id: expect.stringMatching(/^cmpl-/),
    });
    expect(body.usage).toEqual({ prompt_tokens: 4, completion_tokens: 16, total_tokens: 20 });
  });

  it.each([
    ['/v1/chat/completions', { messages: [] }],
    ['/v1/chat/completions', { messages: [{ content: 'no role' }] }],
    ['/v1/chat/completions', { ...chat, max_tokens: 0 }],
    ['/v1/completions', {}],
  ])('answers 400 invalid_request_error to %s %j', async (path, body) => {
    const res = await post(worker, path, body);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      message: expect.any(String),
      type: 'invalid_request_error',
      code: 400,
    });
  });

  it('answers 400 to a body that is not JSON', async () => {
    const res = await fetch(`${worker.url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"prompt":',
    });
    expect(res.status).toBe(400);
    expect(await json<{ type: string }>(res)).toMatchObject({ type: 'invalid_request_error' });
  });

  it('answers 404 not_found for another model', async () => {
    const res = await post(worker, '/v1/chat/completions', { ...chat, model: 'other' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      message: "The model 'other' does not exist",
      type: 'not_found',
      code: 404,
    });
  });
});
