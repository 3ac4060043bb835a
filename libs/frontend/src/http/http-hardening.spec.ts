import { BadRequestException, RawBodyRequest } from '@nestjs/common';
import Fastify, { FastifyInstance, FastifyRequest } from 'fastify';
import { IncomingMessage, request } from 'node:http';
import { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { jsonBodyRefusal } from '../request-body/json-cost';
import { readJsonBody } from './http-hardening';

const LIMIT = 64 * 1024;

const open: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((app) => app.close()));
});

/** A Fastify app whose JSON parser is `install`'s, echoing what the route got. */
function app(install: (sut: FastifyInstance) => void): FastifyInstance {
  const sut = Fastify({ bodyLimit: LIMIT });
  open.push(sut);
  sut.removeContentTypeParser(['application/json', 'text/plain']);
  install(sut);
  sut.post('/', (request) => ({
    body: request.body,
    raw: (request as RawBodyRequest<FastifyRequest>).rawBody?.length,
  }));
  return sut;
}

/** The frontend's JSON parser. */
const streaming = app.bind(null, (sut) => {
  sut.addContentTypeParser(
    'application/json',
    readJsonBody(sut.getDefaultJsonParser('error', 'error'), LIMIT),
  );
});

/** What the frontend had before: Fastify reads the whole body, the cost is counted, then parsed. */
const whole = app.bind(null, (sut) => {
  const json = sut.getDefaultJsonParser('error', 'error');
  sut.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const refusal = jsonBodyRefusal(body as Buffer);
    if (refusal !== undefined) return done(new BadRequestException(refusal), undefined);
    (request as RawBodyRequest<typeof request>).rawBody = body as Buffer;
    void json(request, (body as Buffer).toString('utf8'), done);
  });
});

/** A stream of these pieces, one at a time. */
function pieces(parts: Buffer[]): Readable {
  let i = 0;
  return new Readable({
    read() {
      this.push(i < parts.length ? parts[i++] : null);
    },
  });
}

describe('readJsonBody', () => {
  const deep = `${'['.repeat(200)}${']'.repeat(200)}`;
  const cases: Array<[string, string, Record<string, string>]> = [
    ['valid JSON', '{"model":"m","messages":[{"role":"user","content":"hi \\" there"}]}', {}],
    ['a large valid body', JSON.stringify({ input: new Array<number>(8000).fill(7) }), {}],
    ['invalid JSON', '{"model":', {}],
    ['invalid JSON, long', `{"a":"${'x'.repeat(1000)}",}`, {}],
    ['an empty body', '', {}],
    ['__proto__', '{"__proto__":{"x":1}}', {}],
    ['constructor.prototype', '{"constructor":{"prototype":{"x":1}}}', {}],
    ['nesting over the limit', deep, {}],
    ['a body over the size limit', `"${'x'.repeat(LIMIT)}"`, {}],
    ['a Content-Length larger than the body', '{}', { 'content-length': '9' }],
  ];

  it.each(cases)(
    'answers %s as Fastify reading the whole body did',
    async (_, payload, headers) => {
      const send = (sut: FastifyInstance) =>
        sut.inject({
          method: 'POST',
          url: '/',
          headers: { 'content-type': 'application/json', ...headers },
          payload,
        });
      const [ours, theirs] = await Promise.all([send(streaming()), send(whole())]);
      expect({ status: ours.statusCode, body: ours.json<unknown>() }).toEqual({
        status: theirs.statusCode,
        body: theirs.json<unknown>(),
      });
    },
  );

  it('answers a chunked body that grows over the size limit 413, as Fastify did', async () => {
    const send = (sut: FastifyInstance) =>
      sut.inject({
        method: 'POST',
        url: '/',
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        payload: pieces(new Array<Buffer>(20).fill(Buffer.alloc(4096, '[1],'))),
      });
    const [ours, theirs] = await Promise.all([send(streaming()), send(whole())]);
    expect(ours.statusCode).toBe(413);
    expect(ours.json<unknown>()).toEqual(theirs.json<unknown>());
  });

  it('answers at the piece that goes over, without waiting for the rest of the body', async () => {
    const sut = streaming();
    await sut.listen({ port: 0, host: '127.0.0.1' });
    const { port } = sut.server.address() as AddressInfo;
    const req = request({
      port,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    });
    req.on('error', () => undefined);
    const answered = new Promise<IncomingMessage>((resolve) => req.once('response', resolve));
    // Nested 200 deep in its second piece; the body is never finished.
    req.write('{"a":' + '['.repeat(100));
    req.write('['.repeat(100));
    const res = await answered;
    const text = await new Promise<string>((resolve) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(body));
    });
    req.destroy();
    expect(res.statusCode).toBe(400);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(text)).toMatchObject({ message: 'JSON body nested deeper than 128 levels' });
  });

  it('joins a body sent in pieces, keeps it as the raw body, and parses it', async () => {
    // Every byte a piece of its own: multi-byte characters and escapes cut in the middle.
    const text = JSON.stringify({ model: 'm', s: 'é😀 "\\ ', n: [1, [2, {}]] });
    const parts = Array.from(Buffer.from(text), (byte) => Buffer.from([byte]));
    const res = await streaming().inject({
      method: 'POST',
      url: '/',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      payload: pieces(parts),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ body: JSON.parse(text), raw: Buffer.byteLength(text) });
  });
});
