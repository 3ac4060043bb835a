import type { IncomingMessage, ServerResponse } from 'node:http';
import { OVERLOADED, writeRefusal } from '../admission/refusal';
import { AccessLine } from './logging';
import { rawReplies } from './raw-reply';

/** A response that records what is written to it. */
function response(): { res: ServerResponse; head: unknown[]; body: unknown[] } {
  const head: unknown[] = [];
  const body: unknown[] = [];
  const res = {
    writeHead: (...args: unknown[]) => head.push(...args),
    end: (payload: unknown) => body.push(payload),
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
      ['retry-after', '2'],
      ['content-length', String(OVERLOADED.payload.length)],
    ]);
    expect(body).toEqual([OVERLOADED.payload]);
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
