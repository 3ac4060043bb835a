import { Logger } from '@nestjs/common';
import { parseWorkerFlags } from '../config/worker-flags.parser';
import { createWorkerApp, WorkerApp } from '../worker-app.factory';

interface Embeddings {
  data: Array<{ object: string; index: number; embedding: number[] }>;
  usage: { prompt_tokens: number; total_tokens: number };
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

describe('embeddings (speedup 0)', () => {
  let worker: WorkerApp;

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    worker = await createWorkerApp(parseWorkerFlags(['--port', '0', '--speedup', '0']), null);
  });

  afterAll(() => worker.close());

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

  it('answers 400 invalid_request_error when input is missing or not text', async () => {
    for (const body of [{}, { input: 42 }, { input: [] }]) {
      const res = await post(worker, '/v1/embeddings', body);
      expect(res.status).toBe(400);
      expect(await json<{ type: string }>(res)).toMatchObject({ type: 'invalid_request_error' });
    }
  });

  it('answers 404 not_found for another model', async () => {
    const res = await post(worker, '/v1/embeddings', { input: 'x', model: 'other' });
    expect(res.status).toBe(404);
  });
});
