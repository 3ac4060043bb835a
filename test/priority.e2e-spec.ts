import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MODEL, ReportFields } from './support/bus';
import { useSystem } from './support/fixtures';
import { Answer, keepUnread, metricValue, openStream, OVERLOAD_BODY, post } from './support/http';
import { Heartbeat } from './support/nats-server';
import { FrontendProcess, NATS_URL, waitFor } from './support/processes';

/** Waits on a busy 2-core machine are generous; speed is measured by the bench, not here. */
const WAIT_MS = 30_000;
const THRESHOLDS = ['--admission-control', 'token-capacity', '--active-decode-blocks-threshold'];

/** A chat completion sent with `headers` (e.g. the priority header) to `path`. */
function send(
  fe: FrontendProcess,
  headers: Record<string, string> = {},
  path = 'chat/completions',
): Promise<Answer> {
  const body =
    path === 'chat/completions'
      ? { model: MODEL, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4 }
      : { model: MODEL, prompt: 'Hello', max_tokens: 4 };
  return post(`${fe.url}/v1/${path}`, body, headers);
}

const as = (priority: string): Record<string, string> => ({ 'x-sluice-priority': priority });

/**
 * Reports `loads` (worker id → decode blocks of `totalBlocks`, 100 unless said) on every beat;
 * resolves once applied.
 */
async function load(
  beat: Heartbeat,
  fe: FrontendProcess,
  workers: Record<string, string>,
  loads: Record<string, number>,
  totalBlocks = 100,
): Promise<void> {
  const reports: ReportFields[] = Object.entries(loads).map(([id, blocks]) => ({
    worker_id: id,
    endpoint: workers[id],
    active_decode_blocks: blocks,
    kv_total_blocks: totalBlocks,
    max_num_batched_tokens: 8192,
  }));
  beat.set(...reports);
  for (const [id, blocks] of Object.entries(loads)) {
    await waitFor(
      async () =>
        (await metricValue(fe.url, 'dynamo_frontend_worker_active_decode_blocks', {
          worker_id: id,
        })) === blocks,
      `${id} at ${blocks} blocks`,
      WAIT_MS,
    );
  }
}

/** Rejections counted so far, by the docs/metrics.md counter and by class in the docs/security.md#priority-classes-who-may-set-x-sluice-priority one. */
async function rejections(
  fe: FrontendProcess,
  endpoint = 'chat_completions',
): Promise<Record<string, number>> {
  const read = async (name: string, labels: Record<string, string>) =>
    (await metricValue(fe.url, name, { model: MODEL, endpoint, ...labels })) ?? 0;
  return {
    all: await read('dynamo_frontend_model_rejection_total', {}),
    critical: await read('sluice_frontend_rejection_total', { priority: 'critical' }),
    standard: await read('sluice_frontend_rejection_total', { priority: 'standard' }),
    sheddable: await read('sluice_frontend_rejection_total', { priority: 'sheddable' }),
  };
}

const minus = (a: Record<string, number>, b: Record<string, number>) =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]));

/**
 * docs/security.md#priority-classes-who-may-set-x-sluice-priority, priority classes, end to end: a real frontend process, real NATS and real
 * simulated workers whose load the test reports. Decode threshold 0.8 with the default factors:
 * sheddable requests are judged at 0.64, standard at 0.8, critical at 0.96.
 */
describe('priority classes over real NATS', () => {
  const sys = useSystem({
    database: 'priority',
    workers: [[], []],
    frontend: [...THRESHOLDS, '0.8'],
  });
  let beat: Heartbeat;
  let workers: Record<string, string>;

  beforeAll(async () => {
    beat = await Heartbeat.start(NATS_URL, sys.namespace);
    workers = { 'w-a': sys.workers[0].url, 'w-b': sys.workers[1].url };
  });
  afterAll(() => beat?.close());

  it('refuses sheddable requests first and critical ones last, counting each by class', async () => {
    await load(beat, sys.fe, workers, { 'w-a': 70, 'w-b': 70 }); // over 0.64, under 0.8
    const before = await rejections(sys.fe);
    const shed = await send(sys.fe, as('sheddable'));
    expect([shed.status, shed.text, shed.headers.get('retry-after')]).toEqual([
      503,
      OVERLOAD_BODY,
      '1',
    ]);
    // Refused for its class while the workers are under the configured thresholds.
    expect(shed.headers.get('x-sluice-reject-reason')).toBe('priority');
    expect((await send(sys.fe)).status).toBe(200); // no header: standard
    expect((await send(sys.fe, as('standard'))).status).toBe(200);
    expect((await send(sys.fe, as('critical'))).status).toBe(200);

    await load(beat, sys.fe, workers, { 'w-a': 90, 'w-b': 90 }); // over 0.8, under 0.96
    const shedBusy = await send(sys.fe, as('sheddable'));
    expect([shedBusy.status, shedBusy.headers.get('x-sluice-reject-reason')]).toEqual([
      503,
      'all_workers_busy',
    ]);
    expect((await send(sys.fe, as('standard'))).status).toBe(503);
    expect((await send(sys.fe)).status).toBe(503);
    const critical = await send(sys.fe, as('critical'));
    expect(critical.status).toBe(200);
    // The other endpoints alike, each counted under its own label.
    expect((await send(sys.fe, as('sheddable'), 'completions')).status).toBe(503);

    await load(beat, sys.fe, workers, { 'w-a': 97, 'w-b': 97 }); // over 0.96
    const critical97 = await send(sys.fe, as('critical'));
    expect(critical97.text).toBe(OVERLOAD_BODY);
    expect(critical97.headers.get('x-sluice-reject-reason')).toBe('all_workers_busy');

    expect(minus(await rejections(sys.fe), before)).toEqual({
      all: 5,
      critical: 1,
      standard: 2,
      sheddable: 2,
    });
    expect(
      await metricValue(sys.fe.url, 'sluice_frontend_rejection_total', {
        model: MODEL,
        endpoint: 'completions',
        priority: 'sheddable',
      }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('routes a critical request only to a worker free for critical', async () => {
    await load(beat, sys.fe, workers, { 'w-a': 99, 'w-b': 90 }); // w-a busy even for critical
    const servedBy = new Set<string | null>();
    for (let i = 0; i < 8; i++) {
      const answer = await send(sys.fe, as('critical'));
      expect(answer.status).toBe(200);
      servedBy.add(answer.headers.get('x-sluice-worker-id'));
    }
    expect([...servedBy]).toEqual(['w-b']);
    expect((await send(sys.fe, as('standard'))).status).toBe(503);

    await load(beat, sys.fe, workers, { 'w-a': 90, 'w-b': 50 }); // w-a free for critical only
    const standard = new Set<string | null>();
    for (let i = 0; i < 8; i++) {
      standard.add((await send(sys.fe)).headers.get('x-sluice-worker-id'));
    }
    expect([...standard]).toEqual(['w-b']);
  });

  it('answers 400 naming the header for any other value, before the busy check, not as a rejection', async () => {
    await load(beat, sys.fe, workers, { 'w-a': 99, 'w-b': 99 });
    const before = await rejections(sys.fe);
    for (const value of ['urgent', 'Critical', 'critical, sheddable']) {
      const answer = await send(sys.fe, as(value));
      expect({ value, status: answer.status, body: answer.json }).toEqual({
        value,
        status: 400,
        body: {
          message:
            'Invalid x-sluice-priority header: expected one of critical, standard, sheddable',
          type: 'invalid_request_error',
          code: 400,
        },
      });
    }
    expect(minus(await rejections(sys.fe), before)).toEqual({
      all: 0,
      critical: 0,
      standard: 0,
      sheddable: 0,
    });
    await load(beat, sys.fe, workers, { 'w-a': 10, 'w-b': 10 });
    expect((await send(sys.fe, as('urgent'))).status).toBe(400);
  });

  it('documents the header on the completion routes of the OpenAPI document', async () => {
    const doc = (await (await fetch(`${sys.fe.url}/docs-json`)).json()) as {
      paths: Record<string, { post?: { parameters?: { name: string; in: string }[] } }>;
    };
    for (const path of ['/v1/chat/completions', '/v1/completions', '/v1/embeddings']) {
      expect(doc.paths[path].post?.parameters).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'x-sluice-priority', in: 'header' }),
        ]),
      );
    }
  });
});

/** A frontend with `flags` beside one simulated worker, whose load the test reports. */
function useOneWorker(
  database: string,
  flags: string[],
): {
  sys: ReturnType<typeof useSystem>;
  beat: () => Heartbeat;
} {
  const sys = useSystem({ database, workers: [[]], frontend: [...THRESHOLDS, '0.8', ...flags] });
  let beat: Heartbeat;
  beforeAll(async () => {
    beat = await Heartbeat.start(NATS_URL, sys.namespace);
  });
  afterAll(() => beat?.close());
  return { sys, beat: () => beat };
}

describe('--priority-header none', () => {
  const { sys, beat } = useOneWorker('priority_off', ['--priority-header', 'none']);

  it('ignores the header: every request is standard', async () => {
    const fe = sys.fe;
    await load(beat(), fe, { w: sys.worker.url }, { w: 90 });
    const before = await rejections(fe);
    expect((await send(fe, as('critical'))).status).toBe(503);
    expect((await send(fe, as('urgent'))).status).toBe(503);
    expect(minus(await rejections(fe), before)).toMatchObject({ all: 2, standard: 2 });
    await load(beat(), fe, { w: sys.worker.url }, { w: 70 });
    expect((await send(fe, as('sheddable'))).status).toBe(200);
    const doc = await (await fetch(`${fe.url}/docs-json`)).text();
    expect(doc).not.toContain('x-sluice-priority');
  });
});

describe('--priority-header NAME and --priority-factor', () => {
  const { sys, beat } = useOneWorker('priority_named', [
    ...['--priority-header', 'X-Tier', '--priority-factor', 'sheddable=0.5,critical=1.1'],
  ]);

  it('reads the class from that header instead', async () => {
    const fe = sys.fe;
    await load(beat(), fe, { w: sys.worker.url }, { w: 85 }); // over 0.8, under 0.88
    expect((await send(fe, { 'x-tier': 'critical' })).status).toBe(200);
    expect((await send(fe, as('critical'))).status).toBe(503);
    expect((await send(fe, as('urgent'))).status).toBe(503);
    expect((await send(fe, { 'x-tier': 'urgent' })).json).toMatchObject({
      message: 'Invalid x-tier header: expected one of critical, standard, sheddable',
    });
    const doc = await (await fetch(`${fe.url}/docs-json`)).text();
    expect([doc.includes('"x-tier"'), doc.includes('x-sluice-priority')]).toEqual([true, false]);
  });

  it('judges each class with its own factor', async () => {
    const fe = sys.fe;
    await load(beat(), fe, { w: sys.worker.url }, { w: 60 }); // over 0.4, under 0.8
    expect((await send(fe, { 'x-tier': 'sheddable' })).status).toBe(503);
    expect((await send(fe)).status).toBe(200);
    await load(beat(), fe, { w: sys.worker.url }, { w: 90 }); // over 0.88 (0.8 x 1.1)
    expect((await send(fe, { 'x-tier': 'critical' })).status).toBe(503);
  });
});

describe('--priority-key-file: the bundled policy caps each API key', () => {
  const sys = useSystem({
    database: 'priority_keys',
    workers: [[]],
    frontend: () => {
      const file = join(mkdtempSync(join(tmpdir(), 'sluice-keys-')), 'priority-keys');
      writeFileSync(file, '# class:key\ncritical:sk-ops-0123\nsheddable:sk-batch-0123\n');
      return [...THRESHOLDS, '0.8', '--priority-key-file', file];
    },
  });
  let beat: Heartbeat;
  const key = (k: string, priority?: string): Record<string, string> => ({
    authorization: `Bearer ${k}`,
    ...(priority ? as(priority) : {}),
  });

  beforeAll(async () => {
    beat = await Heartbeat.start(NATS_URL, sys.namespace);
  });
  afterAll(() => beat?.close());

  it('lowers a class above the key’s maximum and judges the request as that class', async () => {
    await load(beat, sys.fe, { w: sys.worker.url }, { w: 70 }); // refuses sheddable only
    const before = await rejections(sys.fe);
    // A batch key is sheddable, whatever it claims.
    expect((await send(sys.fe, key('sk-batch-0123', 'critical'))).status).toBe(503);
    expect((await send(sys.fe, key('sk-batch-0123'))).status).toBe(503);
    expect((await send(sys.fe, key('sk-someone-else', 'critical'))).status).toBe(200);
    expect(minus(await rejections(sys.fe), before)).toMatchObject({ all: 2, sheddable: 2 });

    await load(beat, sys.fe, { w: sys.worker.url }, { w: 90 }); // refuses all but critical
    expect((await send(sys.fe, key('sk-ops-0123', 'critical'))).status).toBe(200);
    // Unlisted keys, and requests without one, may claim up to standard.
    expect((await send(sys.fe, key('sk-someone-else', 'critical'))).status).toBe(503);
    expect((await send(sys.fe, as('critical'))).status).toBe(503);
    expect(minus(await rejections(sys.fe), before)).toMatchObject({ all: 4, standard: 2 });
  });
});

/**
 * The router queue (docs/configuration.md) with classes: one worker, a queue threshold of 0 (a request
 * waits while the worker has any prompt token in flight from this frontend), real timing.
 */
describe('the router queue serves critical requests first', () => {
  const sys = useSystem({
    database: 'priority_queue',
    workers: [['--speedup', '1']],
    frontend: [
      ...[...THRESHOLDS, '0.8', '--router-queue-threshold', '0'],
      ...['--router-queue-timeout-ms', '120000'],
    ],
  });
  let beat: Heartbeat;

  beforeAll(async () => {
    beat = await Heartbeat.start(NATS_URL, sys.namespace);
    // The simulated worker's real KV size: the holder's reserved blocks (prompt + 2,000 output
    // tokens, between two reports) must not make the worker busy, only keep it in the queue's way.
    await load(beat, sys.fe, { w: sys.worker.url }, { w: 0 }, 16384);
  });
  afterAll(() => beat?.close());

  const queued = async () =>
    (await metricValue(sys.fe.url, 'dynamo_frontend_queued_requests', { model: MODEL })) ?? 0;

  it('then standard, then sheddable, once the worker is free', async () => {
    // Holds the worker: ~2,000 tokens at speedup 1 take seconds; cancelled below.
    const holder = new AbortController();
    const held = await openStream(sys.fe.url, 2000, holder.signal);
    expect(held.status).toBe(200);

    const done: string[] = [];
    const waiting: Promise<void>[] = [];
    for (const [i, priority] of ['sheddable', 'standard', 'critical'].entries()) {
      waiting.push(
        send(sys.fe, as(priority)).then((answer) => {
          done.push(`${priority} ${answer.status}`);
        }),
      );
      // In this order: each is queued before the next is sent.
      await waitFor(async () => (await queued()) === i + 1, `${i + 1} queued`, WAIT_MS);
    }
    expect(done).toEqual([]);
    holder.abort();
    await Promise.all(waiting);
    expect(done).toEqual(['critical 200', 'standard 200', 'sheddable 200']);
  });
});

/**
 * docs/security.md#priority-classes-who-may-set-x-sluice-priority: a critical request that finds every worker busy waits in the router queue for the
 * room lower classes hold, instead of being refused, and lower classes are refused first. No
 * `--router-queue-threshold`: the wait is part of priority classes, bounded by the queue timeout.
 * One slow worker (`--speedup 0.05`: a 2,000-token stream takes minutes) whose load the test
 * reports, in blocks of 16,384: standard's limit is 13,107 blocks, critical's 15,728.
 */
describe('a critical request waits for the room lower classes hold', () => {
  const sys = useSystem({
    database: 'priority_wait',
    workers: [['--speedup', '0.05']],
    frontend: [...THRESHOLDS, '0.8', '--router-queue-timeout-ms', '120000'],
  });
  let beat: Heartbeat;
  const holders: AbortController[] = [];
  const report = (blocks: number) =>
    load(beat, sys.fe, { w: sys.worker.url }, { w: blocks }, 16384);
  const queued = async () =>
    (await metricValue(sys.fe.url, 'dynamo_frontend_queued_requests', { model: MODEL })) ?? 0;
  const inflight = async () =>
    (await metricValue(sys.fe.url, 'dynamo_frontend_inflight_requests', { model: MODEL })) ?? 0;

  /** A stream of class `priority` that runs until aborted (2,000 tokens: 126 KV blocks reserved). */
  const hold = async (priority: string): Promise<AbortController> => {
    const holder = new AbortController();
    holders.push(holder);
    const res = await fetch(`${sys.fe.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...as(priority) },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 2000,
        stream: true,
      }),
      signal: holder.signal,
    });
    expect(keepUnread(res, holder.signal).status).toBe(200);
    return holder;
  };

  beforeAll(async () => {
    beat = await Heartbeat.start(NATS_URL, sys.namespace);
  });
  afterEach(async () => {
    for (const h of holders.splice(0)) h.abort();
    await waitFor(async () => (await inflight()) === 0, 'nothing in flight', WAIT_MS);
  });
  afterAll(() => beat?.close());

  it('is served by the room a lower-class request frees; standard and sheddable are refused', async () => {
    await report(0);
    const std = await hold('standard');
    await hold('sheddable');
    await report(15_800); // busy for every class
    const before = await rejections(sys.fe);
    const waiting = [send(sys.fe, as('critical'))];
    await waitFor(async () => (await queued()) === 1, 'one critical request queued', WAIT_MS);
    waiting.push(send(sys.fe, as('critical')));
    await waitFor(async () => (await queued()) === 2, 'two critical requests queued', WAIT_MS);
    // Two lower-class requests in flight, two critical ones waiting for their room: refused.
    expect((await send(sys.fe, as('critical'))).status).toBe(503);
    expect((await send(sys.fe, as('standard'))).status).toBe(503);
    expect((await send(sys.fe, as('sheddable'))).status).toBe(503);
    expect(await queued()).toBe(2);

    // The standard stream ends: its 126 blocks leave the report (15,674 ≤ critical's limit).
    std.abort();
    const answers = await Promise.all(waiting);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(await queued()).toBe(0);
    expect(minus(await rejections(sys.fe), before)).toEqual({
      all: 3,
      critical: 1,
      standard: 1,
      sheddable: 1,
    });
  });

  it('beyond that room critical requests are refused, and no lower class is admitted meanwhile', async () => {
    await report(0);
    await hold('sheddable');
    await report(15_900);
    const before = await rejections(sys.fe);
    const burst = ['critical', 'standard', 'sheddable'].flatMap((c) =>
      Array.from({ length: 4 }, () => send(sys.fe, as(c)).then((a) => `${c} ${a.status}`)),
    );
    await waitFor(
      async () => (await rejections(sys.fe)).all - before.all === 11,
      'all but one refused',
      WAIT_MS,
    );
    expect(await queued()).toBe(1);
    await report(0); // the worker frees: the waiting critical request goes first
    expect((await Promise.all(burst)).sort()).toEqual([
      'critical 200',
      ...Array<string>(3).fill('critical 503'),
      ...Array<string>(4).fill('sheddable 503'),
      ...Array<string>(4).fill('standard 503'),
    ]);
  });
});
