import { connect } from 'node:net';
import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { Answer, chat, post } from './support/http';
import { memoryQuiet, resetPeakRss, rssMiB, statusMiB } from './support/proc';
import { waitFor } from './support/processes';

/** The default body limit (16 MiB), less room for the wrapper around the repeated part. */
const SIZE = 16 * 1024 * 1024 - 4096;
/** docs/security.md#limits-and-hardening: one hostile 16 MiB body raises RSS by less than this; four at once by 4×. */
const ONE_MB = 128;
const FOUR_MB = 4 * ONE_MB;

/** `prefix` + `unit` joined by commas until the whole is about SIZE bytes + `suffix`. */
function filled(prefix: string, unit: string, suffix: string): string {
  const n = Math.floor((SIZE - prefix.length - suffix.length) / (unit.length + 1));
  return prefix + `${unit},`.repeat(n - 1) + unit + suffix;
}

const chatOf = (items: string): string => `{"model":"${MODEL}","max_tokens":1,"messages":${items}}`;
/** 124 levels of arrays: with the body and `messages` around it, 126 ≤ 128 is legal. */
const DEEP = '['.repeat(124) + ']'.repeat(124);

/** Hostile but well-formed (or nearly) 16 MiB bodies, by the shape that makes parsing costly. */
const HOSTILE: Record<string, [path: string, body: () => string]> = {
  'millions of empty objects': [
    '/v1/chat/completions',
    () => filled(`{"model":"${MODEL}","max_tokens":1,"messages":[`, '{}', ']}'),
  ],
  'millions of empty arrays': [
    '/v1/chat/completions',
    () => filled(`{"model":"${MODEL}","max_tokens":1,"messages":[`, '[]', ']}'),
  ],
  'deep but legal nesting, repeated': [
    '/v1/chat/completions',
    () => filled(`{"model":"${MODEL}","max_tokens":1,"messages":[`, DEEP, ']}'),
  ],
  'millions of keys in one object': [
    '/v1/chat/completions',
    () => {
      const prefix = `${chatOf('[{"role":"user","content":"hi"}]').slice(0, -1)},"extra":{`;
      const keys: string[] = [];
      let size = prefix.length + 2;
      for (let i = 0; size < SIZE; i++) {
        keys.push(`"k${i.toString(36)}":0`);
        size += keys[keys.length - 1].length + 1;
      }
      return `${prefix}${keys.join(',')}}}`;
    },
  ],
  'a huge array of small numbers': [
    '/v1/embeddings',
    () => filled(`{"model":"${MODEL}","input":[`, '7', ']}'),
  ],
  'millions of empty strings': [
    '/v1/embeddings',
    () => filled(`{"model":"${MODEL}","input":[`, '""', ']}'),
  ],
};

/**
 * Runs `send` and returns how far the process's peak RSS rose above its RSS before it. The peak
 * (VmHWM) is reset to the RSS first, so each measurement is its own.
 */
async function peakRise(pid: number, send: () => Promise<unknown>): Promise<number> {
  resetPeakRss(pid);
  const before = rssMiB(pid);
  await send();
  return statusMiB(pid, 'VmHWM') - before;
}

function expectClientError(res: Answer): void {
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  expect(res.json).toMatchObject({ message: expect.any(String), type: expect.any(String) });
}

/** A 200, or the answer's status and text in the failure message. */
function expectOk(res: Answer): void {
  const text = res.status === 200 ? '' : res.text.slice(0, 300);
  expect({ status: res.status, text }).toEqual({ status: 200, text: '' });
}

/**
 * Issue 11 item 1 / docs/security.md#limits-and-hardening: what one request's body costs the frontend's memory. Real
 * frontend process with its default 16 MiB body limit, a real simulated worker known through
 * its NATS reports; RSS from /proc (Linux).
 */
describe('memory of one request (docs/security.md#limits-and-hardening)', () => {
  // A KV cache large enough to hold a 10 MB prompt: the worker refuses (400) what it cannot.
  const sys = useSystem({
    workers: [['--kv-total-blocks', '1000000']],
    reporting: true,
    // No flags: a copy of the run's template database, an existing one as for every start after
    // the first, so RSS starts near 400 MB. A new embedded database's creation would leave it
    // near 1 GB, and the memory freed after that start would absorb a body's cost.
    frontend: [],
    serving: true,
  });
  let pid: number;
  const rises: Record<string, number> = {};
  const statuses: Record<string, number> = {};
  let quietAfterMs = 0;
  let startRss = 0;

  beforeAll(async () => {
    pid = sys.fe.proc.pid;
    // Warm the heap and the JIT with ordinary traffic, so the first measurement is not start-up.
    for (let i = 0; i < 20; i++) await chat(sys.fe.url);
    // Then out of the database's start-up compiles (`memoryQuiet`): a body is charged its own cost.
    quietAfterMs = await memoryQuiet(pid);
    startRss = Math.round(rssMiB(pid));
  }, 150_000);

  afterAll(() => {
    console.log(
      `RSS ${startRss} MiB, quiet after ${quietAfterMs} ms; peak RSS rise (MiB): ` +
        `${JSON.stringify(rises)}; status: ${JSON.stringify(statuses)}`,
    );
  });

  it.each(Object.keys(HOSTILE))(
    '%s: a 4xx answer, peak RSS rise < 128 MB',
    async (shape) => {
      const [path, make] = HOSTILE[shape];
      const body = make();
      expect(body.length).toBeGreaterThan(SIZE - 1024);
      let res: Answer | undefined;
      const rise = await peakRise(
        pid,
        async () => (res = await post(`${sys.fe.url}${path}`, body)),
      );
      rises[shape] = Math.round(rise);
      statuses[shape] = (res as Answer).status;
      expectClientError(res as Answer);
      expect(rise).toBeLessThan(ONE_MB);
      expect((await chat(sys.fe.url)).status).toBe(200);
    },
    120_000,
  );

  it('four hostile bodies at once: each a 4xx, peak RSS rise < 4 × 128 MB', async () => {
    const shapes = [
      'millions of empty objects',
      'millions of keys in one object',
      'deep but legal nesting, repeated',
      'millions of empty arrays',
    ];
    const bodies = shapes.map((s) => [HOSTILE[s][0], HOSTILE[s][1]()] as const);
    let answers: Answer[] = [];
    const rise = await peakRise(pid, async () => {
      answers = await Promise.all(bodies.map(([path, body]) => post(`${sys.fe.url}${path}`, body)));
    });
    rises['four at once'] = Math.round(rise);
    answers.forEach(expectClientError);
    expect(rise).toBeLessThan(FOUR_MB);
    expect((await chat(sys.fe.url)).status).toBe(200);
  }, 120_000);

  it('answers a body at the first limit it goes over, before the rest is sent, then reads the rest', async () => {
    // Over 200,000 objects within its first MB: the frontend must answer with 1.5 MiB of the
    // body in hand, not wait for the other 14.5 MiB (which it would then hold whole). Keep-alive,
    // so that the connection is closed because of the answer, not because the client asked.
    const body = Buffer.from(HOSTILE['millions of empty objects'][1]());
    const head =
      'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const bytes = Buffer.concat([Buffer.from(head), body]);
    const sentFirst = head.length + 1.5 * 1024 * 1024;
    const socket = connect(sys.fe.port, '127.0.0.1');
    const errors: Error[] = [];
    socket.on('error', (err) => errors.push(err));
    const received: Buffer[] = [];
    socket.on('data', (d: Buffer) => received.push(d));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(bytes.subarray(0, sentFirst));
    await waitFor(
      () => /\r\n\r\n\{.*\}$/s.test(Buffer.concat(received).toString('latin1')),
      'an answer before the rest of the body',
      20_000,
    );
    const answer = Buffer.concat(received).toString('latin1');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      message: 'JSON body holds more than 200000 objects, arrays and keys',
      type: 'invalid_request_error',
      code: 400,
    });
    // The frontend reads and drops the rest, and closes without resetting the connection.
    socket.end(bytes.subarray(sentFirst));
    await closed;
    expect(errors).toEqual([]);
    expect((await chat(sys.fe.url)).status).toBe(200);
  }, 60_000);

  it('still serves large legitimate bodies: a 10 MB prompt, 300k token ids, a long history', async () => {
    // The worker may still be busy with a hostile body an earlier frontend let through.
    await waitFor(async () => (await chat(sys.fe.url)).status === 200, 'frontend serving', 60_000);
    const prompt = await post(`${sys.fe.url}/v1/completions`, {
      model: MODEL,
      prompt: 'lorem ipsum dolor sit amet '.repeat(Math.ceil(10e6 / 27)),
      max_tokens: 1,
    });
    expectOk(prompt);
    const ids = Array.from({ length: 300 }, (_, j) =>
      Array.from({ length: 1000 }, (_, i) => (i * 7919 + j) % 50000),
    );
    const embeddings = await post(`${sys.fe.url}/v1/embeddings`, { model: MODEL, input: ids });
    expectOk(embeddings);
    const history = Array.from({ length: 20000 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: [{ type: 'text', text: `turn ${i}` }],
    }));
    const tools = [
      {
        type: 'function',
        function: {
          name: 'lookup',
          parameters: {
            type: 'object',
            properties: Object.fromEntries(
              Array.from({ length: 500 }, (_, i) => [`p${i}`, { type: 'string' }]),
            ),
          },
        },
      },
    ];
    const chatRes = await post(`${sys.fe.url}/v1/chat/completions`, {
      model: MODEL,
      messages: history,
      tools,
      max_tokens: 1,
    });
    expectOk(chatRes);
  }, 120_000);
});
