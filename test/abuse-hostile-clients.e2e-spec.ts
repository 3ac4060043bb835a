import { connect, Socket } from 'node:net';
import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { OVERLOAD_BODY, post } from './support/http';
import { waitFor } from './support/processes';
import { rssMiB } from './support/proc';
import { httpBytes, rawRequest } from './support/raw-http';

const SECONDS = Number(process.env.SLUICE_HOSTILE_SECONDS ?? 60);
/** Of the 200 clients, these many send ordinary requests; the rest are hostile, by kind. */
const NORMAL_CLIENTS = 100;
const HOSTILE_KINDS = ['oversized', 'nested', 'costly', 'slow', 'idle', 'malformed'] as const;
const HOSTILE_CLIENTS = 100;
type Kind = (typeof HOSTILE_KINDS)[number];

const NORMAL = JSON.stringify({
  model: MODEL,
  messages: [{ role: 'user', content: 'Hello there' }],
  max_tokens: 4,
});
const NESTED = `{"model":"${MODEL}","messages":${'['.repeat(5000)}${']'.repeat(5000)}}`;
/** 2 MiB of empty objects: legal JSON whose parse would cost far more than its size. */
const COSTLY = `{"model":"${MODEL}","messages":[${'{},'.repeat(700_000)}{}]}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A request sent a few bytes at a time over about two seconds. */
function slowRequest(port: number): Promise<number> {
  const bytes = httpBytes(
    'POST',
    '/v1/chat/completions',
    [['content-type', 'application/json']],
    NORMAL,
  );
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
    void (async () => {
      for (let i = 0; i < bytes.length && !socket.destroyed; i += 16) {
        socket.write(bytes.subarray(i, i + 16));
        await sleep(2000 / Math.ceil(bytes.length / 16));
      }
    })();
  });
}

/** Connects and sends nothing for a few seconds. */
async function idleConnection(port: number): Promise<number> {
  const socket: Socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await sleep(3000);
  socket.destroy();
  return 0;
}

async function hostile(kind: Kind, url: string, port: number): Promise<number> {
  switch (kind) {
    case 'oversized': {
      const head = httpBytes('POST', '/v1/chat/completions', [
        ['content-type', 'application/json'],
        ['content-length', String(64 * 1024 * 1024)],
      ]);
      return (await rawRequest(port, Buffer.concat([head, Buffer.alloc(64 * 1024, 0x20)]))).status;
    }
    case 'nested':
      return (await post(`${url}/v1/chat/completions`, NESTED)).status;
    case 'costly':
      return (await post(`${url}/v1/chat/completions`, COSTLY)).status;
    case 'slow':
      return slowRequest(port);
    case 'idle':
      return idleConnection(port);
    case 'malformed':
      return (await rawRequest(port, Buffer.from('POST /v1/chat\u0000 HTTP/1.1\r\n\r\n'))).status;
  }
}

const soak = process.env.SLUICE_SOAK === '1' ? describe : describe.skip;

/**
 * Issue 11 "Done when": 200 concurrent clients for a minute (SLUICE_HOSTILE_SECONDS), half of
 * them hostile (oversized, deeply nested, costly-to-parse, slow, idle, malformed), against a
 * real frontend and simulated worker on loopback. Every ordinary request is answered as the
 * contract says, every hostile one gets its own exact answer, the process never dies, and its RSS
 * peak is reported. Runs with SLUICE_SOAK=1 (`npm run test:soak`, in CI).
 */
soak('hostile clients beside normal traffic (SLUICE_SOAK=1 to run)', () => {
  const sys = useSystem({ frontend: [], workers: [[]], reporting: true });

  beforeAll(async () => {
    await waitFor(
      async () => (await post(`${sys.fe.url}/v1/chat/completions`, NORMAL)).status === 200,
      'worker known to the frontend',
    );
  }, 120_000);

  it(
    'answers every normal request correctly, never crashes, reports its RSS peak',
    async () => {
      const pid = sys.fe.proc.child.pid as number;
      const port = Number(new URL(sys.fe.url).port);
      const until = Date.now() + SECONDS * 1000;
      const rss: number[] = [rssMiB(pid)];
      const sampler = setInterval(() => rss.push(rssMiB(pid)), 500);
      const normal = { ok: 0, shed: 0, wrong: [] as string[] };
      const hostileCodes: Record<string, Record<number, number>> = {};

      const normalClient = async (): Promise<void> => {
        while (Date.now() < until) {
          try {
            const res = await post(`${sys.fe.url}/v1/chat/completions`, NORMAL);
            const body = res.json as { choices?: unknown[] } | undefined;
            if (res.status === 200 && Array.isArray(body?.choices)) normal.ok++;
            else if (res.status === 503 && res.text === OVERLOAD_BODY) normal.shed++;
            else normal.wrong.push(`${res.status} ${res.text.slice(0, 200)}`);
          } catch (err) {
            normal.wrong.push(String(err));
          }
        }
      };
      const hostileClient = async (kind: Kind): Promise<void> => {
        const codes = (hostileCodes[kind] ??= {});
        while (Date.now() < until) {
          const status = await hostile(kind, sys.fe.url, port).catch(() => -1);
          codes[status] = (codes[status] ?? 0) + 1;
        }
      };
      try {
        await Promise.all([
          ...Array.from({ length: NORMAL_CLIENTS }, normalClient),
          ...Array.from({ length: HOSTILE_CLIENTS }, (_, i) =>
            hostileClient(HOSTILE_KINDS[i % HOSTILE_KINDS.length]),
          ),
        ]);
      } finally {
        clearInterval(sampler);
      }
      process.stdout.write(
        `${JSON.stringify({ seconds: SECONDS, normal: { ...normal, wrong: normal.wrong.slice(0, 5) }, hostile: hostileCodes, rssMiB: { atStart: rss[0], peak: Math.max(...rss) } }, null, 2)}\n`,
      );

      expect(normal.wrong).toEqual([]);
      expect(normal.ok).toBeGreaterThan(0);
      expect(sys.fe.proc.child.exitCode).toBeNull();
      expect((await fetch(`${sys.fe.url}/live`)).status).toBe(200);
      // What each hostile client must get, exactly: a failed request (-1) or another status is a
      // wrong answer, not a rejection. An idle connection gets no answer (0) before it leaves.
      const expected: Record<Kind, number[]> = {
        oversized: [413],
        nested: [400],
        costly: [400],
        slow: [200, 503],
        idle: [0],
        malformed: [400],
      };
      for (const kind of HOSTILE_KINDS) {
        const seen = Object.keys(hostileCodes[kind] ?? {}).map(Number);
        expect([kind, seen.length > 0]).toEqual([kind, true]);
        expect([kind, seen.filter((s) => !expected[kind].includes(s))]).toEqual([kind, []]);
      }
      expect(sys.fe.proc.output).not.toMatch(/"level":50/);
    },
    (SECONDS + 60) * 1000,
  );
});
