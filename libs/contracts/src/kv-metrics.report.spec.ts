import { parseKvMetricsReport, parseWorkerDown } from './kv-metrics.report';

const wire = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  worker_id: 'w-1',
  model: 'Qwen/Qwen3-0.6B',
  endpoint: 'http://127.0.0.1:9001',
  active_decode_blocks: 870,
  kv_total_blocks: 1000,
  active_prefill_tokens: 1200,
  ...over,
});

const reasonFor = (raw: unknown): string | undefined => {
  const r = parseKvMetricsReport(raw);
  return r.ok ? undefined : r.reason;
};

describe('parseKvMetricsReport', () => {
  const sut = parseKvMetricsReport;

  it('accepts a minimal report and applies dp_rank 0 and dp_size 1', () => {
    expect(sut(wire())).toEqual({
      ok: true,
      value: {
        workerId: 'w-1',
        model: 'Qwen/Qwen3-0.6B',
        endpoint: 'http://127.0.0.1:9001',
        dpRank: 0,
        dpSize: 1,
        activeDecodeBlocks: 870,
        kvTotalBlocks: 1000,
        activePrefillTokens: 1200,
        numRequestsWaiting: undefined,
        maxNumBatchedTokens: undefined,
        timestampMs: undefined,
        seq: undefined,
      },
    });
  });

  it('accepts a report without active_prefill_tokens (real engines rarely export it)', () => {
    const raw = wire();
    delete raw.active_prefill_tokens;
    expect(sut(raw)).toMatchObject({ ok: true, value: { activePrefillTokens: undefined } });
  });

  it('maps the optional source, and refuses one that is not printable text', () => {
    expect(sut(wire({ source: 'bridge vllm h:1' }))).toMatchObject({
      ok: true,
      value: { source: 'bridge vllm h:1' },
    });
    expect(reasonFor(wire({ source: 7 }))).toBe("missing or invalid field 'source'");
    expect(reasonFor(wire({ source: 'a\nb' }))).toBe("missing or invalid field 'source'");
    expect(reasonFor(wire({ source: 's'.repeat(257) }))).toBe("missing or invalid field 'source'");
  });

  it('maps num_requests_waiting and seq', () => {
    expect(sut(wire({ num_requests_waiting: 3, seq: 42 }))).toMatchObject({
      ok: true,
      value: { numRequestsWaiting: 3, seq: 42 },
    });
  });

  it.each(['w\r\nx-injected: 1', 'w\u0000', 'wörker', 'w\t1', 'w\u{1F600}'])(
    'refuses a worker_id that cannot be an HTTP header value: %j',
    (id) => {
      expect(reasonFor(wire({ worker_id: id }))).toBe("missing or invalid field 'worker_id'");
    },
  );

  it('maps every optional field of the contract example', () => {
    const r = sut(
      wire({ dp_rank: 1, dp_size: 2, max_num_batched_tokens: 8192, timestamp_ms: 1764470000000 }),
    );
    expect(r).toMatchObject({
      ok: true,
      value: { dpRank: 1, dpSize: 2, maxNumBatchedTokens: 8192, timestampMs: 1764470000000 },
    });
  });

  it('maps the KV block size, and refuses one below 1', () => {
    expect(sut(wire({ kv_block_size: 2048 }))).toMatchObject({
      ok: true,
      value: { kvBlockSize: 2048 },
    });
    expect(sut(wire())).not.toHaveProperty('value.kvBlockSize');
    expect(reasonFor(wire({ kv_block_size: 0 }))).toBe("missing or invalid field 'kv_block_size'");
  });

  it('accepts zero loads and an https endpoint', () => {
    const r = sut(
      wire({ endpoint: 'https://w.example', active_decode_blocks: 0, active_prefill_tokens: 0 }),
    );
    expect(r.ok).toBe(true);
  });

  it.each(['http://127.0.0.1:9001/', 'http://127.0.0.1:9001///'])(
    'trims trailing slashes from endpoint %s',
    (endpoint) => {
      expect(sut(wire({ endpoint }))).toMatchObject({
        ok: true,
        value: { endpoint: 'http://127.0.0.1:9001' },
      });
    },
  );

  it('gives the same result for an endpoint seen before, and still rejects a bad one', () => {
    for (let i = 0; i < 3; i++) {
      expect(sut(wire({ endpoint: 'http://w-again:9001/' }))).toMatchObject({
        value: { endpoint: 'http://w-again:9001' },
      });
      expect(reasonFor(wire({ endpoint: 'ftp://w-again:9001' }))).toContain("'endpoint'");
    }
  });

  it('keeps validating endpoints after more distinct ones than it remembers', () => {
    for (let i = 0; i < 5000; i++) {
      expect(sut(wire({ endpoint: `http://w-${i}:9001` })).ok).toBe(true);
    }
    expect(sut(wire({ endpoint: 'http://w-0:9001/' }))).toMatchObject({
      value: { endpoint: 'http://w-0:9001' },
    });
    expect(reasonFor(wire({ endpoint: 'http://' }))).toContain("'endpoint'");
  });

  it('keeps a path prefix of the endpoint', () => {
    expect(sut(wire({ endpoint: 'http://gw/pool-a/' }))).toMatchObject({
      value: { endpoint: 'http://gw/pool-a' },
    });
  });

  const required = ['worker_id', 'model', 'endpoint', 'active_decode_blocks', 'kv_total_blocks'];

  it.each(required)('rejects a report without %s, naming the field', (field) => {
    const raw = wire();
    delete raw[field];
    expect(reasonFor(raw)).toBe(`missing or invalid field '${field}'`);
  });

  it.each(required)('rejects %s set to null', (field) => {
    expect(reasonFor(wire({ [field]: null }))).toContain(`'${field}'`);
  });

  it.each([
    ['worker_id', 42],
    ['worker_id', ''],
    ['worker_id', 'x'.repeat(257)],
    ['model', ['m']],
    ['model', ''],
    ['model', 'm'.repeat(257)],
    ['endpoint', 9001],
    ['endpoint', 'ftp://127.0.0.1:9001'],
    ['endpoint', '127.0.0.1:9001'],
    ['endpoint', 'http://'],
    ['endpoint', 'nats://127.0.0.1:4222'],
    ['endpoint', `http://h/${'p'.repeat(2048)}`],
  ])('rejects %s = %j', (field, value) => {
    expect(reasonFor(wire({ [field]: value }))).toBe(`missing or invalid field '${field}'`);
  });

  const counts = [
    'active_decode_blocks',
    'kv_total_blocks',
    'active_prefill_tokens',
    'num_requests_waiting',
    'max_num_batched_tokens',
    'kv_block_size',
    'timestamp_ms',
    'seq',
    'dp_size',
    'dp_rank',
  ];
  const badCounts: Array<[string, unknown]> = [
    ['negative', -1],
    ['fractional', 1.5],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['a numeric string', '5'],
    ['NaN as a string', 'NaN'],
    ['beyond MAX_SAFE_INTEGER', Number.MAX_SAFE_INTEGER + 2],
    ['a boolean', true],
    ['an object', { n: 1 }],
  ];
  it.each(counts.flatMap((f) => badCounts.map(([what, v]) => [f, what, v] as const)))(
    'rejects %s when it is %s',
    (field, _what, value) => {
      expect(reasonFor(wire({ dp_size: 4, [field]: value }))).toBe(
        `missing or invalid field '${field}'`,
      );
    },
  );

  it('accepts MAX_SAFE_INTEGER itself as a count', () => {
    expect(sut(wire({ timestamp_ms: Number.MAX_SAFE_INTEGER })).ok).toBe(true);
  });

  it.each([
    [{ dp_rank: 2, dp_size: 2 }, 'dp_rank'],
    [{ dp_rank: 1 }, 'dp_rank'],
    [{ dp_size: 0 }, 'dp_size'],
    [{ dp_size: 1025 }, 'dp_size'],
  ])('rejects %j', (over, field) => {
    expect(reasonFor(wire(over))).toBe(`missing or invalid field '${field}'`);
  });

  it('accepts the last rank of the largest dp_size', () => {
    expect(sut(wire({ dp_rank: 1023, dp_size: 1024 })).ok).toBe(true);
  });

  it.each([null, undefined, [], [wire()], 'text', 42, true])(
    'rejects the non-object payload %j',
    (raw) => {
      expect(sut(raw)).toEqual({ ok: false, reason: 'payload is not a JSON object' });
    },
  );
});

describe('parseWorkerDown', () => {
  const sut = parseWorkerDown;

  it('accepts {"worker_id": "w-1"}', () => {
    expect(sut({ worker_id: 'w-1' })).toEqual({ ok: true, value: { workerId: 'w-1' } });
  });

  it.each([{}, { worker_id: '' }, { worker_id: 7 }, { worker_id: 'x'.repeat(257) }])(
    'rejects %j',
    (raw) => {
      expect(sut(raw)).toEqual({ ok: false, reason: "missing or invalid field 'worker_id'" });
    },
  );

  it.each([null, [], ['w-1'], 'w-1'])('rejects the non-object payload %j', (raw) => {
    expect(sut(raw)).toEqual({ ok: false, reason: 'payload is not a JSON object' });
  });
});
