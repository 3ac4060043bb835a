import { readFileSync, writeFileSync } from 'node:fs';
import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { Answer, chat, post } from './support/http';
import { tempDataDir, waitFor } from './support/processes';

/** The default body limit (16 MiB), less room for the wrapper around the repeated part. */
const SIZE = 16 * 1024 * 1024 - 4096;
/** Contract §9: one hostile 16 MiB body raises RSS by less than this; four at once by 4×. */
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

function procStatusMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(
    readFileSync(`/proc/${pid}/status`, 'utf8'),
  );
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

/**
 * Runs `send` and returns how far the process's peak RSS rose above its RSS before it. Writing
 * 5 to clear_refs resets the peak (VmHWM) to the current RSS, so each measurement is its own.
 */
async function peakRise(pid: number, send: () => Promise<unknown>): Promise<number> {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  const before = procStatusMiB(pid, 'VmRSS');
  await send();
  return procStatusMiB(pid, 'VmHWM') - before;
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
 * Issue 11 item 1 / contract §9: what one request's body costs the frontend's memory. Real
 * frontend process with its default 16 MiB body limit, a real simulated worker known through
 * its NATS reports; RSS from /proc (Linux).
 */
describe('memory of one request (contract §9)', () => {
  // A KV cache large enough to hold a 10 MB prompt: the worker refuses (400) what it cannot.
  const sys = useSystem({
    workers: [['--kv-total-blocks', '1000000']],
    reporting: true,
    // A new embedded database, created at start, as before the run's template existed. Started
    // on an existing one the frontend rises by 113-143 MB for some shapes (docs/security.md,
    // "Open"): this spec does not yet measure that case, and stays as it was until the fix.
    frontend: ['--data-dir', tempDataDir()],
    serving: true,
  });
  let pid: number;
  const rises: Record<string, number> = {};
  const statuses: Record<string, number> = {};

  beforeAll(async () => {
    pid = sys.fe.proc.pid;
    // Warm the heap and the JIT with ordinary traffic, so the first measurement is not start-up.
    for (let i = 0; i < 20; i++) await chat(sys.fe.url);
  }, 120_000);

  afterAll(() => {
    console.log(
      `peak RSS rise (MiB): ${JSON.stringify(rises)}; status: ${JSON.stringify(statuses)}`,
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
