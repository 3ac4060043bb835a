import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OVERLOADED, overloadRefusal, writeRefusal } from '../admission/refusal';
import { AccessLine } from './logging';
import { rawReplies } from './raw-reply';

/** A response that records what is written to it. */
function response(): { res: ServerResponse; head: unknown[]; body: unknown[] } {
  const head: unknown[] = [];
  const body: unknown[] = [];
  const res = {
    writeHead: (...args: unknown[]) => head.push(...args),
    end: (payload: unknown, encoding?: unknown) => body.push(payload, encoding),
  } as unknown as ServerResponse;
  return { res, head, body };
}

/** The head `writeHead` was given (a flat name/value list), as [name, value] pairs. */
const pairs = (head: unknown[]): [string, string][] => {
  const list = head[1] as string[];
  return list.flatMap((name, i) => (i % 2 === 0 ? [[name, list[i + 1]] as [string, string]] : []));
};

const request = (headers: Record<string, string> = {}) =>
  ({ method: 'POST', url: '/v1/chat/completions', headers }) as IncomingMessage;

describe('rawReplies (answers written before Fastify sees the request)', () => {
  it("writes the refusal with the headers Fastify's hooks give every JSON answer, in their order", () => {
    const { res, head, body } = response();
    writeRefusal(rawReplies(null)(request({ 'x-request-id': 'trace-7' }), res, 0), OVERLOADED, '2');
    expect(head[0]).toBe(503);
    expect(pairs(head)).toEqual([
      ['x-content-type-options', 'nosniff'],
      ['x-frame-options', 'SAMEORIGIN'],
      ['x-request-id', 'trace-7'],
      ['content-type', 'application/json'],
      ['x-sluice-reject-reason', 'all_workers_busy'],
      ['retry-after', '2'],
      ['content-length', String(OVERLOADED.payload.length)],
    ]);
    expect(body).toEqual([OVERLOADED.payloadLatin1, 'latin1']);
  });

  it('puts the payload on the wire byte for byte, whatever its characters', async () => {
    // Multi-byte UTF-8 in the message: its latin1 string must still write the same bytes.
    const refusal = overloadRefusal('Überlastet: “alle” Worker sind belegt ✓', 'all_workers_busy');
    const server = createServer((req, res) =>
      writeRefusal(rawReplies(null)(req, res, 0), refusal, '1'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, { method: 'POST' });
      expect(res.status).toBe(503);
      expect(res.headers.get('content-length')).toBe(String(refusal.payload.length));
      expect(Buffer.from(await res.arrayBuffer())).toEqual(refusal.payload);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('sends a Buffer as it is when the writer gives no latin1 string', () => {
    const { res, body } = response();
    const payload = Buffer.from('{"x":1}');
    const reply = rawReplies(null)(request(), res, 0);
    reply.code(503);
    reply.send(payload);
    expect(body).toEqual([payload, undefined]);
  });

  it('makes up a request id when the caller gave no sane one', () => {
    const { res, head } = response();
    writeRefusal(rawReplies(null)(request({ 'x-request-id': 'a b' }), res, 0), OVERLOADED, null);
    const headers = new Map(pairs(head));
    expect(headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(headers.has('retry-after')).toBe(false);
  });

  it('writes the access log line of the answer when the log is on', () => {
    const lines: AccessLine[] = [];
    const { res } = response();
    const arrived = performance.now() - 5;
    writeRefusal(
      rawReplies((l) => lines.push(l))(request({ 'x-request-id': 'trace-8' }), res, arrived),
      OVERLOADED,
      '1',
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      reqId: 'trace-8',
      method: 'POST',
      url: '/v1/chat/completions',
      statusCode: 503,
    });
    expect(lines[0].ms).toBeGreaterThanOrEqual(5);
  });
});
