import fc from 'fast-check';
import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { chat, metricValue } from './support/http';
import { waitFor } from './support/processes';
import { rssMiB } from './support/proc';

const MAX_WORKERS = 1000;
/**
 * The frontend runs with a capped V8 heap. Uncapped, V8 lets garbage pile up for hundreds of MB
 * before a major GC, so RSS before/after says more about GC timing than about retention; capped,
 * anything kept per report or per refused worker id would end in an out-of-memory crash, and
 * RSS has to stay flat.
 */
const HEAP_MB = 128;
const FLOOD = 100_000;
const SEED = 20261130;
const INVALID = 'dynamo_frontend_kv_metrics_invalid_total';

/** A report that passes docs/api.md#nats-subjects, for the test to break one field at a time. */
const valid = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  worker_id: 'abuse-valid',
  model: 'abuse/model',
  endpoint: 'http://127.0.0.1:9',
  dp_rank: 0,
  dp_size: 1,
  active_decode_blocks: 1,
  kv_total_blocks: 100,
  active_prefill_tokens: 0,
  max_num_batched_tokens: 8192,
  timestamp_ms: Date.now(),
  ...over,
});

const COUNT_FIELDS = [
  'active_decode_blocks',
  'kv_total_blocks',
  'active_prefill_tokens',
  'max_num_batched_tokens',
  'timestamp_ms',
  'dp_size',
  'dp_rank',
];
/** JSON text for numbers JSON.stringify cannot write (1e400) or would round (2^64). */
const RAW_NUMBERS = ['1e400', '-1e400', '18446744073709551616', '9007199254740993', '1e300'];
const BAD_COUNTS: unknown[] = [
  -1,
  -0.5,
  1.5,
  'NaN',
  'Infinity',
  '-Infinity',
  '5',
  '',
  true,
  {},
  [],
];

/**
 * Issue #6 point 5: anyone on NATS can publish anything. Every malformed report is dropped and
 * counted, the number of tracked workers stays at `--max-workers`, memory stays bounded, and
 * the monitor keeps applying real reports throughout.
 */
describe('hostile or broken load reports on real NATS', () => {
  const sys = useSystem({
    database: 'abuse_reports',
    bus: true,
    workers: [[]],
    frontend: [
      ...['--max-workers', String(MAX_WORKERS)],
      // Long enough that no flood worker expires mid-test and frees a slot.
      ...['--worker-ttl-ms', '600000'],
    ],
    env: { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` },
  });
  let realLoad = 0;

  const invalid = async (): Promise<number> => (await metricValue(sys.fe.url, INVALID)) ?? 0;
  const tracked = async (): Promise<number> => {
    const text = await (await fetch(`${sys.fe.url}/metrics`)).text();
    return text.split('\n').filter((l) => l.startsWith('dynamo_frontend_worker_busy{')).length;
  };
  const rss = (): number => rssMiB(sys.fe.proc.child.pid as number);

  /** Publishes and waits until the frontend has counted exactly `expected` more drops. */
  async function expectDropped(publish: () => void, expected: number, timeoutMs = 10000) {
    const before = await invalid();
    publish();
    await sys.bus.flush();
    await waitFor(
      async () => (await invalid()) >= before + expected,
      `${expected} drops counted`,
      timeoutMs,
      50,
    );
    // Settled: nothing more trickles in beyond what was sent.
    await new Promise((r) => setTimeout(r, 200));
    expect((await invalid()) - before).toBe(expected);
  }

  /** The monitor still applies a real report: a new load value shows up in the gauge. */
  async function expectMonitorAlive(): Promise<void> {
    realLoad = (realLoad % 50) + 1;
    sys.bus.report(sys.fe.namespace, {
      worker_id: 'real',
      endpoint: sys.worker.url,
      active_decode_blocks: realLoad,
    });
    await waitFor(
      async () =>
        (await metricValue(sys.fe.url, 'dynamo_frontend_worker_active_decode_blocks', {
          worker_id: 'real',
        })) === realLoad,
      `report ${realLoad} of the real worker applied`,
    );
    expect((await chat(sys.fe.url)).status).toBe(200);
  }

  beforeAll(() => expectMonitorAlive());

  it('drops and counts wrong types, negative and huge numbers, NaN as a string, bad endpoints', async () => {
    const payloads: Array<string | Record<string, unknown> | unknown[] | null | number> = [
      ...COUNT_FIELDS.flatMap((f) => BAD_COUNTS.map((v) => valid({ dp_size: 4, [f]: v }))),
      ...COUNT_FIELDS.flatMap((f) =>
        RAW_NUMBERS.map((n) =>
          JSON.stringify(valid({ [f]: 0 })).replace(`"${f}":0`, `"${f}":${n}`),
        ),
      ),
      valid({ worker_id: 42 }),
      valid({ worker_id: '' }),
      valid({ worker_id: 'w'.repeat(257) }),
      valid({ worker_id: ['w'] }),
      valid({ model: {} }),
      valid({ model: '' }),
      valid({ endpoint: 9001 }),
      valid({ endpoint: 'ftp://127.0.0.1:9001' }),
      valid({ endpoint: 'javascript:alert(1)' }),
      valid({ endpoint: 'http://' }),
      valid({ endpoint: `http://h/${'p'.repeat(3000)}` }),
      valid({ dp_rank: 2, dp_size: 2 }),
      valid({ dp_size: 0 }),
      valid({ dp_size: 100000 }),
      null,
      42,
      'a string',
      [],
      [valid()],
      '{"worker_id": "truncated',
      'not json at all',
      '',
    ];
    await expectDropped(() => {
      for (const p of payloads) {
        sys.bus.raw(
          sys.fe.namespace,
          'kv_metrics',
          typeof p === 'string' ? new TextEncoder().encode(p) : p,
        );
      }
    }, payloads.length);
    expect(await tracked()).toBe(1);
    await expectMonitorAlive();
  });

  it('drops and counts malformed worker_down messages without removing anyone', async () => {
    const payloads = [
      {},
      { worker_id: 7 },
      { worker_id: '' },
      { worker_id: 'x'.repeat(300) },
      null,
      'real',
      ['real'],
    ];
    await expectDropped(() => {
      for (const p of payloads) sys.bus.raw(sys.fe.namespace, 'worker_down', p);
    }, payloads.length);
    expect(await tracked()).toBe(1);
    await expectMonitorAlive();
  });

  it('counts every arbitrary JSON value published as a report (fast-check batches)', async () => {
    // Arbitrary JSON almost never has a valid worker_id, model and endpoint; those that name a
    // worker_id at all are left out so that every value is certainly malformed.
    const arbitraryPayload = fc
      .jsonValue({ maxDepth: 4 })
      .filter((v) => !(typeof v === 'object' && v !== null && 'worker_id' in v));
    const brokenReport = fc
      .tuple(fc.constantFrom(...COUNT_FIELDS), fc.constantFrom(...BAD_COUNTS))
      .map(([field, value]) => valid({ dp_size: 4, [field]: value }));
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(arbitraryPayload, brokenReport), { minLength: 1, maxLength: 200 }),
        async (batch) => {
          await expectDropped(() => {
            for (const p of batch) sys.bus.raw(sys.fe.namespace, 'kv_metrics', p);
          }, batch.length);
        },
      ),
      { numRuns: 8, seed: SEED },
    );
    expect(await tracked()).toBe(1);
    await expectMonitorAlive();
  });

  it('drops ~1 MB reports that are malformed and keeps nothing of the well-formed ones', async () => {
    const MB = 1_000_000;
    const before = rss();
    const garbage = new Uint8Array(MB).fill(0x7b); // '{{{{…'
    const hugeId = new TextEncoder().encode(
      JSON.stringify(valid({ worker_id: 'w'.repeat(MB - 400) })),
    );
    expect(hugeId.length).toBeLessThan(1_048_576);
    // In batches of ~10 MB, so NATS never holds more for the frontend than a slow reader may.
    for (let batch = 0; batch < 10; batch++) {
      await expectDropped(() => {
        for (let i = 0; i < 5; i++) {
          sys.bus.raw(sys.fe.namespace, 'kv_metrics', garbage);
          sys.bus.raw(sys.fe.namespace, 'kv_metrics', hugeId);
        }
      }, 10);
    }
    // A valid report padded to ~1 MB with a field Sluice does not read: applied, padding dropped.
    for (let batch = 0; batch < 10; batch++) {
      for (let i = 0; i < 10; i++) {
        const load = batch * 10 + i;
        sys.bus.raw(
          sys.fe.namespace,
          'kv_metrics',
          valid({ worker_id: 'padded', active_decode_blocks: load, padding: 'p'.repeat(MB - 400) }),
        );
      }
      await sys.bus.flush();
      await waitFor(
        async () =>
          (await metricValue(sys.fe.url, 'dynamo_frontend_worker_active_decode_blocks', {
            worker_id: 'padded',
          })) ===
          batch * 10 + 9,
        `padded batch ${batch} applied`,
      );
    }
    // NATS itself refuses anything over its max_payload (1 MiB here) before it reaches Sluice.
    expect(() => sys.bus.raw(sys.fe.namespace, 'kv_metrics', new Uint8Array(1_048_577))).toThrow(
      /MAX_PAYLOAD_EXCEEDED/,
    );
    sys.bus.workerDown(sys.fe.namespace, 'padded');
    await waitFor(async () => (await tracked()) === 1, 'padded worker removed');
    const after = rss();
    process.stdout.write(
      `abuse-reports 1 MB payloads RSS MiB: ${before.toFixed(1)} -> ${after.toFixed(1)}\n`,
    );
    // 200 MB went through the monitor; it keeps none of it (the heap cap is 128 MB).
    expect(after - before).toBeLessThan(96);
    await expectMonitorAlive();
  });

  it(`tracks at most --max-workers (${MAX_WORKERS}) of ${FLOOD} distinct worker ids, counts the rest, memory bounded`, async () => {
    const flood = async (prefix: string): Promise<void> => {
      await expectDropped(
        () => {
          for (let i = 0; i < FLOOD; i++) {
            sys.bus.report(sys.fe.namespace, {
              worker_id: `${prefix}-${i}`,
              model: 'flood/model',
              endpoint: 'http://127.0.0.1:9',
            });
          }
        },
        // The real worker holds one slot; everyone past the cap is refused and counted.
        FLOOD - (prefix === 'flood-a' ? MAX_WORKERS - 1 : 0),
        60000,
      );
      expect(await tracked()).toBe(MAX_WORKERS);
    };
    const start = rss();
    const logFrom = sys.fe.proc.output.length;
    await flood('flood-a');
    const afterFirst = rss();
    // A second wave of 100,000 new ids: all refused; memory does not grow with them.
    await flood('flood-b');
    const afterSecond = rss();
    process.stdout.write(
      `abuse-reports RSS MiB: start ${start.toFixed(1)}, after 1st flood ${afterFirst.toFixed(1)}, after 2nd ${afterSecond.toFixed(1)}\n`,
    );
    expect(afterFirst - start).toBeLessThan(150);
    expect(afterSecond - afterFirst).toBeLessThan(30);
    // A flood must not flood the log: refusals are summarised at most once per 10 s.
    const dropLines = sys.fe.proc.output.slice(logFrom).match(/dropped \d+ load report/g) ?? [];
    expect(dropLines.length).toBeLessThanOrEqual(3);
    // The real worker kept its slot and its reports still apply.
    await expectMonitorAlive();

    // Once the flood workers are gone, a new worker can join again: the cap is not stuck.
    for (let i = 0; i < MAX_WORKERS - 1; i++) sys.bus.workerDown(sys.fe.namespace, `flood-a-${i}`);
    await sys.bus.flush();
    await waitFor(async () => (await tracked()) === 1, 'flood workers removed', 20000);
    sys.bus.report(sys.fe.namespace, {
      worker_id: 'newcomer',
      model: MODEL,
      endpoint: sys.worker.url,
    });
    await waitFor(
      async () =>
        (await metricValue(sys.fe.url, 'dynamo_frontend_worker_busy', {
          worker_id: 'newcomer',
        })) === 0,
      'newcomer tracked',
    );
    sys.bus.workerDown(sys.fe.namespace, 'newcomer');
    await expectMonitorAlive();
  });

  it('ignores threshold-change notifications naming no storable model, without a query or a log line', async () => {
    const payloads = [
      null,
      [],
      'x',
      { model: 5 },
      { model: '' },
      { model: 'a\u0000b' },
      { model: 'm'.repeat(100_000) },
    ];
    for (let i = 0; i < 100; i++) {
      for (const p of payloads) sys.bus.raw(sys.fe.namespace, 'busy_threshold_changed', p);
    }
    await sys.bus.flush();
    await new Promise((r) => setTimeout(r, 500));
    expect(sys.fe.proc.output).not.toMatch(/could not reload thresholds/);
    expect(sys.fe.proc.child.exitCode).toBeNull();
    await expectMonitorAlive();
  });
});
