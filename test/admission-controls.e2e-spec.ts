import { SluiceClient, SluiceOverloadedError } from '@sluice/client';
import { MODEL, ReportFields } from './support/bus';
import { queryRows } from './support/database';
import { System, useSystem } from './support/fixtures';
import { Answer, chat, metricValue, OVERLOAD_BODY, post } from './support/http';
import { FrontendProcess, Proc, spawnApp, waitFor } from './support/processes';

/**
 * docs/operations.md#hysteresis-and-dwell's shadow mode, hysteresis, dwell and measured Retry-After, end to end: real
 * frontend processes on real NATS and PostgreSQL, a real simulated worker; the test publishes
 * the worker's load reports so each state is exact.
 */

/** Generous: how fast things happen is the bench's business; here only that they do. */
const DEADLINE_MS = 60_000;
/** The tests publish reports only when they mean to: nobody expires meanwhile. */
const NO_EXPIRY = ['--worker-ttl-ms', '600000'];
const DECODE_08 = ['--active-decode-blocks-threshold', '0.8'];

const ADMIN = 'alice:alice-secret-token';
const asAdmin = { authorization: 'Bearer alice-secret-token' };

const WOULD_REJECT = 'sluice_frontend_would_reject_total';
const TRANSITIONS = 'sluice_frontend_worker_busy_transitions_total';

/** Publishes a report of `used` of 100 KV blocks and waits until the frontend shows it. */
async function report(
  sys: System,
  fe: FrontendProcess,
  used: number,
  fields: Partial<ReportFields> = {},
): Promise<void> {
  const worker_id = fields.worker_id ?? 'w';
  const labels = { worker_id, dp_rank: '0' };
  await waitFor(
    async () => {
      sys.bus.report(fe.namespace, {
        worker_id,
        endpoint: sys.worker.url,
        active_decode_blocks: used,
        ...fields,
      });
      await sys.bus.flush();
      return (
        (await metricValue(fe.url, 'dynamo_frontend_worker_active_decode_blocks', labels)) === used
      );
    },
    `report of ${worker_id} with ${used} blocks applied`,
    DEADLINE_MS,
    200,
  );
}

const count = async (fe: FrontendProcess, name: string, labels: Record<string, string>) =>
  (await metricValue(fe.url, name, labels)) ?? 0;

const wouldReject = (fe: FrontendProcess, endpoint = 'chat_completions') =>
  count(fe, WOULD_REJECT, { model: MODEL, endpoint, priority: 'standard' });

const rejections = (fe: FrontendProcess) =>
  count(fe, 'dynamo_frontend_model_rejection_total', { model: MODEL });

const complete = (fe: FrontendProcess): Promise<Answer> =>
  post(`${fe.url}/v1/completions`, { model: MODEL, prompt: 'Hello', max_tokens: 2 });

/** Asks until the answer has `status`; the answer that had it. */
const until = (fe: FrontendProcess, status: number, what: string): Promise<Answer> =>
  waitFor(
    async () => {
      const answer = await chat(fe.url);
      return answer.status === status ? answer : undefined;
    },
    what,
    DEADLINE_MS,
    100,
  );

describe('--admission-control shadow (global)', () => {
  const sys = useSystem({
    database: 'shadow',
    bus: true,
    workers: [[]],
    frontend: ['--admission-control', 'shadow', ...DECODE_08, ...NO_EXPIRY],
  });

  it('says so in the startup line', () => {
    expect(sys.fe.proc.output).toMatch(
      /busy-worker rejection SHADOW \(admission-control shadow.*active_decode_blocks_threshold=0\.8/,
    );
  });

  it('admits every request while every worker is busy, counting each as a would-be rejection', async () => {
    await report(sys, sys.fe, 90);
    const [chatBefore, completionsBefore] = [
      await wouldReject(sys.fe),
      await wouldReject(sys.fe, 'completions'),
    ];
    const answers = [await chat(sys.fe.url), await chat(sys.fe.url), await complete(sys.fe)];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    // Served by the busy worker: there is no other.
    expect(answers[0].headers.get('x-sluice-worker-id')).toBe('w');
    expect(await wouldReject(sys.fe)).toBe(chatBefore + 2);
    expect(await wouldReject(sys.fe, 'completions')).toBe(completionsBefore + 1);
    // Admitted, so neither a rejection nor an overload error.
    expect(await rejections(sys.fe)).toBe(0);
    const overloads = await count(sys.fe, 'dynamo_frontend_requests_total', {
      model: MODEL,
      error_type: 'overload',
    });
    expect(overloads).toBe(0);
  });

  it('counts nothing while a worker is free', async () => {
    await report(sys, sys.fe, 10);
    const before = await wouldReject(sys.fe);
    expect((await chat(sys.fe.url)).status).toBe(200);
    expect(await wouldReject(sys.fe)).toBe(before);
  });
});

/**
 * The per-model mode: stored, audited, listed and replicated like the thresholds. Replica A
 * enforces globally, replica B admits everything globally; both share the database and NATS.
 */
describe('admission_control per model over /busy_threshold (two replicas)', () => {
  const OTHER = 'other/model';
  const flags = (global: string) => (s: System) => [
    ...['--database-url', s.db.url()],
    ...['--admin-token', ADMIN, '--admission-control', global, ...DECODE_08, ...NO_EXPIRY],
  ];
  const A = useSystem({
    database: 'per_model_admission',
    bus: true,
    workers: [[]],
    frontend: flags('token-capacity'),
  });
  const B = useSystem({ namespace: A.namespace, frontend: () => flags('none')(A) });

  const entry = async (fe: FrontendProcess): Promise<Record<string, unknown>> =>
    (await post(`${fe.url}/busy_threshold`, { model: MODEL })).json as Record<string, unknown>;
  const mode = async (fe: FrontendProcess) => (await entry(fe)).admission_control;
  const set = (value: unknown) =>
    post(`${A.fe.url}/busy_threshold`, { model: MODEL, admission_control: value }, asAdmin);
  const auditRows = async () =>
    Number(
      (await queryRows<{ n: string }>(A.db.url(), 'SELECT count(*) AS n FROM threshold_audit'))[0]
        .n,
    );
  const stored = async () =>
    (
      await queryRows<{ v: string | null }>(
        A.db.url(),
        'SELECT admission_control AS v FROM model_thresholds WHERE model = $1',
        [MODEL],
      )
    )[0]?.v ?? null;
  /** Replica B has heard of the change (NATS, else its periodic resync). */
  const onB = (value: string) =>
    waitFor(async () => (await mode(B.fe)) === value, `B's mode ${value}`, DEADLINE_MS, 100);

  beforeAll(async () => {
    for (const fe of [A.fe, B.fe]) {
      await report(A, fe, 90);
      await report(A, fe, 90, { worker_id: 'o', model: OTHER });
    }
  }, DEADLINE_MS * 4);

  it('lists each replica’s effective mode: the global flag while none is stored', async () => {
    expect(await entry(A.fe)).toEqual({
      model: MODEL,
      active_decode_blocks_threshold: 0.8,
      active_prefill_tokens_threshold: null,
      active_prefill_tokens_threshold_frac: null,
      waiting_requests_threshold: null,
      admission_control: 'token-capacity',
      ttft_slo_ms: null,
    });
    expect(await mode(B.fe)).toBe('none');
    const list = (await (await fetch(`${B.fe.url}/busy_threshold`)).json()) as {
      thresholds: Array<Record<string, unknown>>;
    };
    expect(list.thresholds.map((t) => [t.model, t.admission_control])).toEqual([
      [MODEL, 'none'],
      [OTHER, 'none'],
    ]);
    expect((await chat(A.fe.url)).status).toBe(503);
    expect((await chat(B.fe.url)).status).toBe(200);
  });

  it('sets shadow: stored, audited, applied on A at once and on B once replicated', async () => {
    const rows = await auditRows();
    const res = await set('shadow');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ model: MODEL, admission_control: 'shadow' });
    expect(await stored()).toBe('shadow');
    expect(await auditRows()).toBe(rows + 1);
    const audit = (await (
      await fetch(`${A.fe.url}/busy_threshold/audit?model=${encodeURIComponent(MODEL)}&limit=1`)
    ).json()) as { entries: Array<{ actor: string; before: object; after: object }> };
    expect(audit.entries[0]).toMatchObject({
      actor: 'alice',
      before: { admission_control: null, active_decode_blocks_threshold: null },
      after: { admission_control: 'shadow', active_decode_blocks_threshold: null },
    });

    // A enforces globally, but not for this model any more: admitted, counted.
    const before = await wouldReject(A.fe);
    expect((await chat(A.fe.url)).status).toBe(200);
    expect(await wouldReject(A.fe)).toBe(before + 1);
    expect(await rejections(A.fe)).toBe(1); // the one 503 of the first test

    // Another busy model still enforces: its 503 comes the early way, before parsing.
    const other = await post(`${A.fe.url}/v1/chat/completions`, {
      model: OTHER,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(other.status).toBe(503);
    expect(other.text).toBe(OVERLOAD_BODY);
    expect((await chat(A.fe.url)).status).toBe(200);

    await onB('shadow');
    const onBBefore = await wouldReject(B.fe);
    expect((await chat(B.fe.url)).status).toBe(200);
    expect(await wouldReject(B.fe)).toBe(onBBefore + 1);
  });

  it('sets token-capacity: B, which admits everything globally, refuses the model', async () => {
    expect((await set('token-capacity')).status).toBe(200);
    await onB('token-capacity');
    const refused = await chat(B.fe.url);
    expect(refused.status).toBe(503);
    expect(refused.text).toBe(OVERLOAD_BODY);
    // Only this model: the other keeps B's global none.
    const other = await post(`${B.fe.url}/v1/chat/completions`, {
      model: OTHER,
      messages: [{ role: 'user', content: 'hi' }],
    });
    // Admitted and sent to its worker, whose simulated engine serves only MODEL: its own 404.
    expect(other.headers.get('x-sluice-worker-id')).toBe('o');
    expect(other.status).toBe(404);
  });

  it('sets none: admitted on A without counting', async () => {
    expect((await set('none')).status).toBe(200);
    const before = await wouldReject(A.fe);
    expect((await chat(A.fe.url)).status).toBe(200);
    expect(await wouldReject(A.fe)).toBe(before);
  });

  it('clears with null: each replica follows its global flag again', async () => {
    const res = await set(null);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ admission_control: 'token-capacity' });
    expect(await stored()).toBeNull();
    expect((await chat(A.fe.url)).status).toBe(503);
    await onB('none');
    expect((await chat(B.fe.url)).status).toBe(200);
  });

  it.each([['enforce'], ['Shadow'], [''], [1], [true], [['shadow']], [{ mode: 'shadow' }]])(
    'answers 400 for admission_control %j and changes nothing',
    async (value) => {
      expect((await set('shadow')).status).toBe(200);
      const [rows, before] = [await auditRows(), await entry(A.fe)];
      const res = await set(value);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ type: 'invalid_request_error', code: 400 });
      expect(JSON.stringify(res.json)).toContain('admission_control');
      expect(await auditRows()).toBe(rows);
      expect(await entry(A.fe)).toEqual(before);
      expect(await stored()).toBe('shadow');
    },
  );
});

describe('--busy-release-factor and --retry-after-secs auto', () => {
  const sys = useSystem({
    database: 'hysteresis',
    bus: true,
    workers: [[]],
    frontend: [
      ...['--busy-release-factor', '0.5', '--retry-after-secs', 'auto'],
      ...['--admission-control', 'token-capacity', ...DECODE_08, ...NO_EXPIRY],
    ],
  });

  it('keeps a rank hovering at the threshold busy until it is at or below threshold × F', async () => {
    await report(sys, sys.fe, 10);
    const transitions = () => count(sys.fe, TRANSITIONS, { model: MODEL });
    const before = await transitions();
    const statuses: number[] = [];
    // Busy above 0.8; once busy, free only at or below 0.8 × 0.5 = 0.4; free, busy above 0.8.
    for (const used of [81, 79, 80, 81, 79, 41, 40, 79, 80, 81]) {
      await report(sys, sys.fe, used);
      statuses.push((await chat(sys.fe.url)).status);
    }
    expect(statuses).toEqual([503, 503, 503, 503, 503, 503, 200, 200, 200, 503]);
    // Three flips (busy, free, busy) where the bare rule would have flipped five times.
    expect(await transitions()).toBe(before + 3);
  });

  it('answers Retry-After 1 before any busy spell has ended, then the measured estimate', async () => {
    // A model of its own, whose one worker makes the spells (refusals need no worker to serve).
    const model = 'spells/model';
    const spells = { worker_id: 'spells', model };
    const ask = () =>
      post(`${sys.fe.url}/v1/chat/completions`, {
        model,
        messages: [{ role: 'user', content: 'hi' }],
      });
    const refused = (what: string) =>
      waitFor(
        async () => {
          const answer = await ask();
          return answer.status === 503 ? answer : undefined;
        },
        what,
        DEADLINE_MS,
        100,
      );
    const busy = () =>
      metricValue(sys.fe.url, 'dynamo_frontend_worker_busy', { worker_id: 'spells' });

    await report(sys, sys.fe, 90, spells);
    const first = await refused('the first spell under way');
    expect(first.headers.get('retry-after')).toBe('1');
    expect(first.text).toBe(OVERLOAD_BODY);

    // A spell of at least 4 s as the frontend measures it (from its seeing busy to free).
    await new Promise((resolve) => setTimeout(resolve, 4000));
    await report(sys, sys.fe, 10, spells);
    expect(await busy()).toBe(0);

    await report(sys, sys.fe, 90, spells);
    const measured = await refused('the second spell under way');
    const secs = Number(measured.headers.get('retry-after'));
    expect(Number.isInteger(secs)).toBe(true);
    expect(secs).toBeGreaterThanOrEqual(2);
    expect(secs).toBeLessThanOrEqual(60);
    expect(measured.text).toBe(OVERLOAD_BODY);

    // The client waits what the header says before its next attempt.
    const slept: number[] = [];
    const client = new SluiceClient({
      baseUrl: sys.fe.url,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, budget: false },
      sleep: (ms) => {
        slept.push(ms);
        return Promise.resolve();
      },
    });
    try {
      const err = await client
        .chatCompletions({ model, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SluiceOverloadedError);
      expect((err as SluiceOverloadedError).attempts).toBe(2);
      expect(slept).toHaveLength(1);
      expect(slept[0]).toBeGreaterThanOrEqual(2000);
      expect(slept[0] % 1000).toBe(0);
    } finally {
      await client.close();
    }
  });
});

describe('--busy-min-dwell-ms', () => {
  const DWELL_MS = 15_000;
  const sys = useSystem({
    database: 'dwell',
    bus: true,
    workers: [[]],
    frontend: [
      ...['--busy-min-dwell-ms', String(DWELL_MS)],
      ...['--admission-control', 'token-capacity', ...DECODE_08, ...NO_EXPIRY],
    ],
  });

  it('holds a new busy state through a free report, then frees the worker with no new report', async () => {
    const flipped = Date.now();
    await report(sys, sys.fe, 90);
    await until(sys.fe, 503, 'busy');
    await report(sys, sys.fe, 10);
    // The report is applied, but the rank keeps its new state for the dwell.
    expect((await chat(sys.fe.url)).status).toBe(503);
    await until(sys.fe, 200, 'free once the dwell has ended');
    expect(Date.now() - flipped).toBeGreaterThanOrEqual(DWELL_MS);
  });
});

/** docs/configuration.md: an invalid value exits with code 2 and names the flag and the value. */
describe('flags of the admission controls', () => {
  const INVALID: Array<[string, string]> = [
    ['--admission-control', 'sometimes'],
    ['--busy-release-factor', '0'],
    ['--busy-release-factor', '1.5'],
    ['--busy-release-factor', 'half'],
    ['--busy-min-dwell-ms', '-5'],
    ['--busy-min-dwell-ms', '2.5'],
    ['--retry-after-secs', 'never'],
    ['--retry-after-secs', 'AUTO'],
  ];
  // Each refusal is a start of the frontend app, a second or more of loading modules: all are
  // started side by side, and each test judges its own.
  let started: Map<string, Proc>;
  beforeAll(() => {
    started = new Map(
      INVALID.map(([flag, v]) => [`${flag} ${v}`, spawnApp('frontend', [flag, v])]),
    );
  });

  it.each(INVALID)(
    'rejects %s %s with exit code 2, naming the flag and the value',
    async (flag, value) => {
      const proc = started.get(`${flag} ${value}`) as Proc;
      expect(await proc.exited).toBe(2);
      const firstLine = proc.output.split('\n')[0];
      expect(firstLine).toContain(flag);
      expect(firstLine).toContain(`'${value}'`);
      expect(proc.output).toMatch(/usage:/);
    },
  );
});
