import { Logger } from '@nestjs/common';
import { EventPublisher } from '@sluice/bus';
import { KvMetricsWire } from '@sluice/contracts';
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function post(worker: WorkerApp, path: string, body: unknown): Promise<Response> {
  return fetch(`${worker.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const chat = { messages: [{ role: 'user', content: 'Tell me about sluice gates.' }] };

describe('createWorkerApp', () => {
  beforeAll(() => {
    Logger.overrideLogger(['error']);
  });

  describe('serving (speedup 0)', () => {
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
  });

  it('reports every data-parallel rank with the advertised endpoint', async () => {
    const publisher = new RecordingPublisher();
    const argv = ['--port', '0', '--dp-size', '2', '--advertise-url', 'http://w.test:1234'];
    const worker = await createWorkerApp(parseWorkerFlags(argv), publisher);
    await worker.close();
    const reports = publisher.sent.slice(0, 2).map((m) => m.payload as KvMetricsWire);
    expect(reports.map((r) => [r.dp_rank, r.dp_size, r.endpoint])).toEqual([
      [0, 2, 'http://w.test:1234'],
      [1, 2, 'http://w.test:1234'],
    ]);
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
