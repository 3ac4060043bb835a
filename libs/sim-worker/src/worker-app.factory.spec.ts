import { Logger } from '@nestjs/common';
import { EventPublisher } from '@sluice/bus';
import { estimatePromptTokens, KvMetricsWire } from '@sluice/contracts';
import { parseWorkerFlags } from './config/worker-flags.parser';
import { createWorkerApp, WorkerApp } from './worker-app.factory';

class RecordingPublisher extends EventPublisher {
  readonly sent: Array<{ subject: string; payload: object }> = [];

  publish(subject: string, payload: object): void {
    this.sent.push({ subject, payload });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  lastReport(): KvMetricsWire | undefined {
    const reports = this.sent.filter((m) => m.subject.endsWith('.kv_metrics'));
    return reports.at(-1)?.payload as KvMetricsWire | undefined;
  }
}

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

interface Embeddings {
  data: Array<{ object: string; index: number; embedding: number[] }>;
  usage: { prompt_tokens: number; total_tokens: number };
}

async function json<T>(response: Response | Promise<Response>): Promise<T> {
  return (await (await response).json()) as T;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

describe('createWorkerApp', () => {
  beforeAll(() => {
    Logger.overrideLogger(['error']);
  });

  describe('OpenAI API (speedup 0)', () => {
    let worker: WorkerApp;
    let publisher: RecordingPublisher;

    beforeAll(async () => {
      publisher = new RecordingPublisher();
      const argv = ['--port', '0', '--speedup', '0', '--worker-id', 'w-api'];
      worker = await createWorkerApp(parseWorkerFlags(argv), publisher);
    });

    afterAll(() => worker.close());

    it('listens on an ephemeral port and reports the actual URL', () => {
      expect(worker.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(worker.url).not.toMatch(/:0$/);
      expect(publisher.lastReport()?.endpoint).toBe(worker.url);
      expect(worker.workerId).toBe('w-api');
    });

    it('lists the served model and answers /health', async () => {
      const models = await fetch(`${worker.url}/v1/models`);
      expect(await models.json()).toEqual({
        object: 'list',
        data: [
          {
            id: 'Qwen/Qwen3-0.6B',
            object: 'model',
            created: expect.any(Number),
            owned_by: 'sluice',
          },
        ],
      });
      expect((await fetch(`${worker.url}/health`)).status).toBe(200);
    });

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

    it('embeds each input as a 32-dimensional unit vector, as floats or base64', async () => {
      const input = ['first', 'second'];
      const body = await json<Embeddings>(post(worker, '/v1/embeddings', { input }));
      expect(body.data).toHaveLength(2);
      expect(body.data[1]).toMatchObject({ object: 'embedding', index: 1 });
      expect(body.data[0].embedding).toHaveLength(32);
      expect(Math.hypot(...body.data[0].embedding)).toBeCloseTo(1, 6);
      expect(body.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });

      const encoded = await json<{ data: Array<{ embedding: string }> }>(
        post(worker, '/v1/embeddings', { input, encoding_format: 'base64' }),
      );
      const bytes = Uint8Array.from(Buffer.from(encoded.data[0].embedding, 'base64'));
      const floats = Array.from(new Float32Array(bytes.buffer));
      expect(floats).toHaveLength(32);
      floats.forEach((value, i) => expect(value).toBeCloseTo(body.data[0].embedding[i], 6));
    });

    it.each([
      ['/v1/chat/completions', { messages: [] }],
      ['/v1/chat/completions', { messages: [{ content: 'no role' }] }],
      ['/v1/chat/completions', { ...chat, max_tokens: 0 }],
      ['/v1/completions', {}],
      ['/v1/embeddings', { input: 42 }],
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

  describe('load and lifecycle (speedup 1)', () => {
    it('frees the blocks of a stream whose client disconnects', async () => {
      const publisher = new RecordingPublisher();
      const options = parseWorkerFlags(['--port', '0', '--worker-id', 'w-cancel']);
      const worker = await createWorkerApp(options, publisher);
      try {
        const abort = new AbortController();
        const body = { ...chat, max_tokens: 2000, stream: true };
        const res = await fetch(`${worker.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: abort.signal,
        });
        await res.body?.getReader().read(); // the first token has been generated
        await sleep(50);
        expect(publisher.lastReport()?.active_decode_blocks).toBeGreaterThan(0);

        abort.abort();
        await sleep(100);
        expect(publisher.lastReport()?.active_decode_blocks).toBe(0);
      } finally {
        await worker.close();
      }
    });

    it('publishes worker_down, cuts streams, refuses unary requests and stops serving on close', async () => {
      const publisher = new RecordingPublisher();
      const options = parseWorkerFlags(['--port', '0', '--worker-id', 'w-down']);
      const worker = await createWorkerApp(options, publisher);
      const res = await post(worker, '/v1/chat/completions', {
        ...chat,
        max_tokens: 2000,
        stream: true,
      });
      const reader = res.body!.getReader();
      await reader.read();
      const unary = post(worker, '/v1/completions', { prompt: 'long', max_tokens: 2000 });
      await sleep(50);

      await worker.close();
      const refused = await unary;
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({
        message: 'the worker is shutting down',
        type: 'service_unavailable',
        code: 503,
      });
      expect(publisher.sent.at(-1)).toEqual({
        subject: 'namespace.dynamo.worker_down',
        payload: { worker_id: 'w-down' },
      });
      await expect(drain(reader)).rejects.toThrow();
      await expect(fetch(`${worker.url}/health`)).rejects.toThrow();
    });
  });
});

async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  for (;;) {
    const { done } = await reader.read();
    if (done) return;
  }
}
