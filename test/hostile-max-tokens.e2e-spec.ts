import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { post } from './support/http';
import { sleep } from '@sluice/testkit';

/** Requests a second of each client: the normal traffic and the hostile one. */
const RATE = 10;
/** Length of each run; 60 normal requests make one request 1.7 points of the 503 share. */
const RUN_MS = 6000;
/** max_tokens of the hostile client: 2^53 (past JSON's exact integers) and near Number.MAX_VALUE. */
const HOSTILE = ['9007199254740992', '1.7e308'];

/**
 * One client sending absurd max_tokens cannot make everyone else's requests 503 (issue 41 item
 * 2): the frontend answers it 400 itself (docs/api.md), never reserving for it, and the 503 share
 * of the normal traffic beside it stays what it is without it. Real frontend, real NATS, a real
 * simulated worker reporting its own load, under token-capacity.
 */
describe('a client sending hostile max_tokens beside normal traffic', () => {
  const sys = useSystem({
    reporting: true,
    workers: [['--speedup', '1']],
    frontend: ['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.8'],
    serving: true,
  });

  const chat = (maxTokens: string) =>
    post(
      `${sys.fe.url}/v1/chat/completions`,
      `{"model":"${MODEL}","messages":[{"role":"user","content":"Hello there"}],"max_tokens":${maxTokens}}`,
    );

  /** Sends `make(i)` RATE times a second for RUN_MS; resolves with every answer. */
  async function paced<T>(make: (i: number) => Promise<T>): Promise<T[]> {
    const sent: Promise<T>[] = [];
    const n = (RATE * RUN_MS) / 1000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      sent.push(make(i));
      await sleep(Math.max(0, t0 + ((i + 1) * 1000) / RATE - performance.now()));
    }
    return Promise.all(sent);
  }

  const share503 = (statuses: number[]) =>
    (100 * statuses.filter((s) => s === 503).length) / statuses.length;

  it('gets 400 from the frontend itself, and the others keep their 503 share', async () => {
    const alone = await paced(async () => (await chat('16')).status);
    const [beside, hostile] = await Promise.all([
      paced(async () => (await chat('16')).status),
      paced((i) => chat(HOSTILE[i % HOSTILE.length])),
    ]);
    for (const answer of hostile) {
      expect(answer.status).toBe(400);
      // Refused before any worker was chosen: no worker's name on it.
      expect(answer.headers.get('x-sluice-worker-id')).toBeNull();
      // The contract's error body (docs/api.md#errors).
      expect(answer.json).toMatchObject({
        message: expect.stringMatching(/max_tokens/),
        type: 'invalid_request_error',
        code: 400,
      });
    }
    process.stdout.write(
      `503 share of the normal traffic: ${share503(alone).toFixed(1)} % alone, ` +
        `${share503(beside).toFixed(1)} % beside the hostile client\n`,
    );
    expect(alone.every((s) => s === 200 || s === 503)).toBe(true);
    expect(beside.every((s) => s === 200 || s === 503)).toBe(true);
    expect(Math.abs(share503(beside) - share503(alone))).toBeLessThanOrEqual(1);
  }, 120_000);
});

/**
 * `--max-model-len` (docs/api.md#errors): more output than the models' context holds is answered
 * 400 by the frontend, before any worker sees it; a request within it is served.
 */
describe('max_tokens above --max-model-len', () => {
  const sys = useSystem({
    reporting: true,
    workers: [[]],
    frontend: ['--max-model-len', '2048'],
    serving: true,
  });

  const ask = (field: string, n: number) =>
    post(
      `${sys.fe.url}/v1/chat/completions`,
      `{"model":"${MODEL}","messages":[{"role":"user","content":"Hi"}],"${field}":${n}}`,
    );

  it.each(['max_tokens', 'max_completion_tokens'])('answers %s 2049 with 400', async (field) => {
    const answer = await ask(field, 2049);
    expect(answer.status).toBe(400);
    expect(answer.headers.get('x-sluice-worker-id')).toBeNull();
    expect(answer.json).toMatchObject({
      message: expect.stringContaining(`${field} (2049) is greater than the model's context`),
      type: 'invalid_request_error',
      code: 400,
    });
  });

  it('serves max_tokens 2048', async () => {
    const answer = await ask('max_tokens', 2048);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-sluice-worker-id')).not.toBeNull();
  });
});
