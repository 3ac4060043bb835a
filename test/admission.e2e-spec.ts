import { MODEL, TestBus } from './support/bus';
import { useSystem } from './support/fixtures';
import { chat, metricValue, OVERLOAD_BODY, post } from './support/http';
import { startFrontend, waitFor } from './support/processes';
import { request } from 'node:http';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A chat POST with its body sent whole (Content-Length) or chunked, and every header back. */
function rawPost(base: string, body: string, chunked: boolean): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json' };
    if (!chunked) headers['content-length'] = Buffer.byteLength(body);
    const req = request(`${base}/v1/chat/completions`, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (chunked) req.write(body.slice(0, 10));
    req.end(chunked ? body.slice(10) : body);
  });
}

/**
 * The busy rule and the 503 of docs/api.md#errors/docs/architecture.md#busy-rule, end to end: a real frontend process, real NATS,
 * real simulated workers; load reports are published by the test so each case is exact.
 */
describe('admission control (token-capacity) over real NATS', () => {
  const sys = useSystem({
    bus: true,
    workers: [[], []],
    frontend: [
      ...['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.8'],
      ...['--active-prefill-tokens-threshold', '1000'],
      ...['--active-prefill-tokens-threshold-frac', '0.5'],
    ],
  });

  /** Publishes a report and waits until the frontend shows it in its worker gauge. */
  async function report(fields: Parameters<TestBus['report']>[1]): Promise<void> {
    sys.bus.report(sys.fe.namespace, fields);
    const decode = String(fields.active_decode_blocks ?? 0);
    const prefill = fields.active_prefill_tokens ?? 0;
    await waitFor(async () => {
      const labels = { worker_id: fields.worker_id, dp_rank: String(fields.dp_rank ?? 0) };
      const d = await metricValue(
        sys.fe.url,
        'dynamo_frontend_worker_active_decode_blocks',
        labels,
      );
      const p = await metricValue(
        sys.fe.url,
        'dynamo_frontend_worker_active_prefill_tokens',
        labels,
      );
      return String(d) === decode && p === prefill;
    }, `report for ${fields.worker_id} applied`);
  }

  const down = async (id: string): Promise<void> => {
    sys.bus.workerDown(sys.fe.namespace, id);
    await waitFor(
      async () =>
        (await metricValue(sys.fe.url, 'dynamo_frontend_worker_busy', { worker_id: id })) ===
        undefined,
      `${id} removed`,
    );
  };

  it('applies the decode threshold strictly: 80/100 admitted, 81/100 rejected with the exact 503', async () => {
    await report({ worker_id: 'strict', endpoint: sys.workers[0].url, active_decode_blocks: 80 });
    expect((await chat(sys.fe.url)).status).toBe(200);

    await report({ worker_id: 'strict', endpoint: sys.workers[0].url, active_decode_blocks: 81 });
    const rejected = await chat(sys.fe.url);
    expect(rejected.status).toBe(503);
    expect(rejected.text).toBe(OVERLOAD_BODY);
    expect(rejected.headers.get('retry-after')).toBe('1');
    expect(rejected.headers.get('content-type')).toBe('application/json');
    expect(rejected.headers.get('x-sluice-reject-reason')).toBe('all_workers_busy');
    // Answered before Nest's pipeline runs, yet with the headers every answer carries.
    expect(rejected.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(rejected.headers.get('x-content-type-options')).toBe('nosniff');
    expect(rejected.headers.get('x-frame-options')).toBe('SAMEORIGIN');

    await report({ worker_id: 'strict', endpoint: sys.workers[0].url, active_decode_blocks: 10 });
    expect((await chat(sys.fe.url)).status).toBe(200); // recovery
    await down('strict');
  });

  it('answers the same 503 from the bytes as from the parsed body, headers and all', async () => {
    await report({ worker_id: 'same', endpoint: sys.workers[0].url, active_decode_blocks: 99 });
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x' }] });
    // A declared length: read and answered by the prescan, before Fastify sees the request.
    const early = await rawPost(sys.fe.url, body, false);
    // Chunked: the prescan leaves it, so Fastify parses it and the route's hook answers.
    const parsed = await rawPost(sys.fe.url, body, true);
    for (const res of [early, parsed]) {
      expect(res.status).toBe(503);
      expect(res.text).toBe(OVERLOAD_BODY);
    }
    const shape = (headers: Record<string, string | string[] | undefined>) => {
      const { date, 'x-request-id': id, ...rest } = headers;
      expect(date).toBeDefined();
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      return rest;
    };
    expect(shape(early.headers)).toEqual(shape(parsed.headers));
    await down('same');
  });

  it('rejects stream requests with the same plain JSON, before any SSE', async () => {
    await report({ worker_id: 'streamer', endpoint: sys.workers[0].url, active_decode_blocks: 99 });
    const rejected = await chat(sys.fe.url, { stream: true });
    expect(rejected.status).toBe(503);
    expect(rejected.text).toBe(OVERLOAD_BODY);
    expect(rejected.headers.get('content-type')).toBe('application/json');
    await down('streamer');
  });

  it('applies the absolute prefill threshold (> 1000 tokens)', async () => {
    await report({
      worker_id: 'prefill',
      endpoint: sys.workers[0].url,
      active_prefill_tokens: 1000,
    });
    expect((await chat(sys.fe.url)).status).toBe(200);
    await report({
      worker_id: 'prefill',
      endpoint: sys.workers[0].url,
      active_prefill_tokens: 1001,
    });
    expect((await chat(sys.fe.url)).status).toBe(503);
    await down('prefill');
  });

  it('applies the frac threshold as floor(F x max_num_batched_tokens), ignored without it', async () => {
    // floor(0.5 x 1001) = 500: 500 is not over it, 501 is.
    const base = { worker_id: 'frac', endpoint: sys.workers[0].url, max_num_batched_tokens: 1001 };
    await report({ ...base, active_prefill_tokens: 500 });
    expect((await chat(sys.fe.url)).status).toBe(200);
    await report({ ...base, active_prefill_tokens: 501 });
    expect((await chat(sys.fe.url)).status).toBe(503);
    await down('frac');
    // Same load, no max_num_batched_tokens: frac cannot fire (and 900 < absolute 1000).
    await report({ worker_id: 'nofrac', endpoint: sys.workers[0].url, active_prefill_tokens: 900 });
    expect((await chat(sys.fe.url)).status).toBe(200);
    await down('nofrac');
  });

  it('routes around a busy worker: the busy one receives nothing', async () => {
    await report({ worker_id: 'busy-a', endpoint: sys.workers[0].url, active_decode_blocks: 95 });
    await report({ worker_id: 'free-b', endpoint: sys.workers[1].url, active_decode_blocks: 5 });
    const served = new Set<string | null>();
    for (let i = 0; i < 10; i++) {
      const res = await chat(sys.fe.url);
      expect(res.status).toBe(200);
      served.add(res.headers.get('x-sluice-worker-id'));
    }
    expect([...served]).toEqual(['free-b']);
    await down('busy-a');
    await down('free-b');
  });

  it('treats a data-parallel worker as busy only when all its ranks are busy', async () => {
    const base = { worker_id: 'dp', endpoint: sys.workers[0].url, dp_size: 2 };
    await report({ ...base, dp_rank: 0, active_decode_blocks: 90 });
    expect((await chat(sys.fe.url)).status).toBe(200); // rank 1 has not reported: not busy
    await report({ ...base, dp_rank: 1, active_decode_blocks: 10 });
    expect((await chat(sys.fe.url)).status).toBe(200); // one busy rank of two
    await report({ ...base, dp_rank: 1, active_decode_blocks: 90 });
    expect((await chat(sys.fe.url)).status).toBe(503); // all ranks busy
    await report({ ...base, dp_rank: 0, active_decode_blocks: 0 });
    expect((await chat(sys.fe.url)).status).toBe(200);
    await down('dp');
  });

  it('answers 404 for a model never seen and 503 once its workers are gone, not as rejections', async () => {
    const before = await metricValue(sys.fe.url, 'dynamo_frontend_model_rejection_total', {
      model: 'gone/model',
    });
    const unknown = await post(`${sys.fe.url}/v1/chat/completions`, {
      model: 'never/seen',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({
      message: "Model 'never/seen' not found",
      type: 'not_found',
      code: 404,
    });

    await report({ worker_id: 'lonely', endpoint: sys.workers[0].url, model: 'gone/model' });
    await down('lonely');
    const gone = await post(`${sys.fe.url}/v1/chat/completions`, {
      model: 'gone/model',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(gone.status).toBe(503);
    expect(gone.json).toEqual({
      message: "No workers available for model 'gone/model'",
      type: 'service_unavailable',
      code: 503,
    });
    expect(gone.headers.get('retry-after')).toBeNull();
    expect(gone.headers.get('x-sluice-reject-reason')).toBe('no_workers');
    const after = await metricValue(sys.fe.url, 'dynamo_frontend_model_rejection_total', {
      model: 'gone/model',
    });
    expect(after ?? 0).toBe(before ?? 0);
  });

  it('counts exactly one rejection per 503 sent, per endpoint', async () => {
    await report({ worker_id: 'counted', endpoint: sys.workers[0].url, active_decode_blocks: 100 });
    const labels = (endpoint: string) => ({ model: MODEL, endpoint });
    const read = async (endpoint: string) =>
      (await metricValue(sys.fe.url, 'dynamo_frontend_model_rejection_total', labels(endpoint))) ??
      0;
    const overloads = async (requestType: string) =>
      (await metricValue(sys.fe.url, 'dynamo_frontend_requests_total', {
        model: MODEL,
        endpoint: 'chat_completions',
        request_type: requestType,
        status: 'error',
        error_type: 'overload',
      })) ?? 0;
    const before = {
      chat: await read('chat_completions'),
      cmpl: await read('completions'),
      emb: await read('embeddings'),
      unary: await overloads('unary'),
      stream: await overloads('stream'),
    };
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await chat(sys.fe.url)).status);
    for (let i = 0; i < 2; i++) {
      statuses.push(
        (await post(`${sys.fe.url}/v1/completions`, { model: MODEL, prompt: 'x' })).status,
      );
    }
    statuses.push((await post(`${sys.fe.url}/v1/embeddings`, { model: MODEL, input: 'x' })).status);
    statuses.push((await chat(sys.fe.url, { stream: true })).status);
    expect(statuses).toEqual([503, 503, 503, 503, 503, 503, 503]);
    expect((await read('chat_completions')) - before.chat).toBe(4);
    expect((await overloads('unary')) - before.unary).toBe(3);
    expect((await overloads('stream')) - before.stream).toBe(1);
    expect((await read('completions')) - before.cmpl).toBe(2);
    expect((await read('embeddings')) - before.emb).toBe(1);
    const overload = await metricValue(sys.fe.url, 'dynamo_frontend_requests_total', {
      model: MODEL,
      endpoint: 'embeddings',
      error_type: 'overload',
    });
    expect(overload).toBeGreaterThanOrEqual(1);
    await down('counted');
  });

  it('drops malformed reports, counts them, and changes nothing', async () => {
    await report({ worker_id: 'steady', endpoint: sys.workers[0].url, active_decode_blocks: 10 });
    const before = (await metricValue(sys.fe.url, 'dynamo_frontend_kv_metrics_invalid_total')) ?? 0;
    const bad: unknown[] = [
      new TextEncoder().encode('{not json'),
      {
        worker_id: 'steady',
        model: MODEL,
        endpoint: sys.workers[0].url,
        active_decode_blocks: 'NaN',
        kv_total_blocks: 100,
        active_prefill_tokens: 0,
      },
      {
        worker_id: 'steady',
        model: MODEL,
        endpoint: sys.workers[0].url,
        active_decode_blocks: -5,
        kv_total_blocks: 100,
        active_prefill_tokens: 0,
      },
      {
        worker_id: 'steady',
        model: MODEL,
        endpoint: sys.workers[0].url,
        active_decode_blocks: 99,
        kv_total_blocks: 100,
        num_requests_waiting: -1,
      },
      {
        worker_id: 'steady',
        model: MODEL,
        endpoint: 'not a url',
        active_decode_blocks: 99,
        kv_total_blocks: 100,
        active_prefill_tokens: 0,
      },
      [1, 2, 3],
    ];
    for (const payload of bad) sys.bus.raw(sys.fe.namespace, 'kv_metrics', payload);
    sys.bus.raw(sys.fe.namespace, 'worker_down', { worker: 'steady' });
    await sys.bus.flush();
    await waitFor(
      async () =>
        ((await metricValue(sys.fe.url, 'dynamo_frontend_kv_metrics_invalid_total')) ?? 0) -
          before ===
        bad.length + 1,
      'invalid reports counted',
    );
    expect(
      await metricValue(sys.fe.url, 'dynamo_frontend_worker_active_decode_blocks', {
        worker_id: 'steady',
      }),
    ).toBe(10);
    expect((await chat(sys.fe.url)).status).toBe(200);
    await down('steady');
  });
});

describe('admission edge configurations', () => {
  const sys = useSystem({ bus: true, workers: [[]] });

  it('with token-capacity but no thresholds, rejects nothing', async () => {
    const fe = await startFrontend(['--admission-control', 'token-capacity']);
    try {
      sys.bus.report(fe.namespace, {
        worker_id: 'full',
        endpoint: sys.worker.url,
        active_decode_blocks: 100,
        active_prefill_tokens: 1e6,
      });
      await waitFor(async () => (await chat(fe.url)).status === 200, 'admitted');
      for (let i = 0; i < 5; i++) expect((await chat(fe.url)).status).toBe(200);
    } finally {
      await fe.proc.stop();
    }
  });

  it('with --admission-control none, admits everything even over the thresholds', async () => {
    const fe = await startFrontend([
      '--admission-control',
      'none',
      '--active-decode-blocks-threshold',
      '0.1',
    ]);
    try {
      sys.bus.report(fe.namespace, {
        worker_id: 'over',
        endpoint: sys.worker.url,
        active_decode_blocks: 100,
      });
      await waitFor(
        async () =>
          (await metricValue(fe.url, 'dynamo_frontend_worker_busy', { worker_id: 'over' })) === 1,
        'worker shown busy',
      );
      for (let i = 0; i < 5; i++) expect((await chat(fe.url)).status).toBe(200);
    } finally {
      await fe.proc.stop();
    }
  });

  it('forgets a silent worker after --worker-ttl-ms, with its metric series', async () => {
    const fe = await startFrontend(['--worker-ttl-ms', '300']);
    try {
      sys.bus.report(fe.namespace, {
        worker_id: 'ephemeral',
        endpoint: sys.worker.url,
        active_decode_blocks: 3,
      });
      await waitFor(
        async () =>
          (await metricValue(fe.url, 'dynamo_frontend_worker_active_decode_blocks', {
            worker_id: 'ephemeral',
          })) === 3,
        'worker tracked',
      );
      await waitFor(
        async () =>
          (await metricValue(fe.url, 'dynamo_frontend_worker_active_decode_blocks', {
            worker_id: 'ephemeral',
          })) === undefined,
        'worker expired',
        5000,
      );
      expect(
        await metricValue(fe.url, 'dynamo_frontend_worker_busy', { worker_id: 'ephemeral' }),
      ).toBeUndefined();
      const res = await chat(fe.url);
      expect(res.status).toBe(503);
      expect(res.json).toMatchObject({
        type: 'service_unavailable',
        message: `No workers available for model '${MODEL}'`,
      });
    } finally {
      await fe.proc.stop();
    }
  });
});
