import Fastify, { FastifyInstance } from 'fastify';
import { connect } from 'node:net';
import { waitFor } from '@sluice/testkit';
import { installPrescan, overloadPrescan, PRESCAN_MAX_BYTES } from './overload-prescan';
import { TopLevelFields } from '../request-body/top-level-fields';

const PATH = '/v1/chat/completions';

interface Harness {
  sut: FastifyInstance;
  /** Bodies that reached the JSON parser, as it received them. */
  parsed: string[];
  /** Fields the prescan asked about. */
  asked: TopLevelFields[];
  /** The class each question came with. */
  classes: string[];
  /** Requests the prescan looked at. */
  seen: number;
  armed: { value: boolean };
  /** Requests that reached Fastify, and the error statuses Fastify answered. */
  started: number;
  errors: number[];
  url: string;
}

const open: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((app) => app.close()));
});

/** A Fastify app with the frontend's JSON parser setup, refusing the model `busy`. */
async function harness(bodyLimit = 1024 * 1024): Promise<Harness> {
  const h: Harness = {
    sut: Fastify({ bodyLimit }),
    parsed: [],
    asked: [],
    classes: [],
    seen: 0,
    armed: { value: true },
    started: 0,
    errors: [],
    url: '',
  };
  h.sut.addHook('onRequest', (_req, _reply, done) => {
    h.started++;
    done();
  });
  h.sut.addHook('onError', (_req, _reply, err, done) => {
    h.errors.push(err.statusCode ?? 500);
    done();
  });
  // As the frontend has it: JSON is the only body type.
  h.sut.removeContentTypeParser(['text/plain']);
  open.push(h.sut);
  const json = h.sut.getDefaultJsonParser('error', 'error');
  h.sut.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    h.parsed.push(body.toString('utf8'));
    void json(req, body.toString('utf8'), done);
  });
  const { prescan, replay } = overloadPrescan(
    // Armed for the class the test's header names (standard without one).
    (req) => {
      h.seen++;
      return h.armed.value ? ((req.headers['x-class'] as string | undefined) ?? 'standard') : null;
    },
    (_req, res, fields, c) => {
      h.asked.push(fields);
      h.classes.push(c);
      if (fields.model !== 'busy') return false;
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ refused: fields }));
      return true;
    },
    bodyLimit,
  );
  installPrescan(h.sut.server, prescan);
  h.sut.post(PATH, { preParsing: replay }, (req) => ({ body: req.body }));
  await h.sut.listen({ port: 0, host: '127.0.0.1' });
  h.url = `http://127.0.0.1:${(h.sut.server.address() as { port: number }).port}${PATH}`;
  return h;
}

/** A real request (the prescan sits on the server's `request` event, which inject skips). */
async function post(
  h: Harness,
  payload: string,
  contentType = 'application/json',
  headers: Record<string, string> = {},
): Promise<{ statusCode: number; json: () => unknown }> {
  const res = await fetch(h.url, {
    method: 'POST',
    body: payload,
    headers: { 'content-type': contentType, ...headers },
  });
  const text = await res.text();
  return { statusCode: res.status, json: () => JSON.parse(text) as unknown };
}

describe('overloadPrescan', () => {
  it('refuses from the bytes, without the parser ever seeing the body', async () => {
    const h = await harness();
    const res = await post(h, '{ "messages": [{"model":"x"}], "model" : "busy", "stream": true }');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ refused: { model: 'busy', stream: true } });
    expect(h.parsed).toEqual([]);
  });

  it('asks with the class the request was armed for', async () => {
    const h = await harness();
    const headers = { 'x-class': 'critical' };
    expect((await post(h, '{"model":"busy"}', 'application/json', headers)).statusCode).toBe(503);
    expect((await post(h, '{"model":"free"}')).statusCode).toBe(200);
    expect(h.classes).toEqual(['critical', 'standard']);
  });

  it('hands an admitted body to the parser as the exact bytes it read', async () => {
    const h = await harness();
    const text = '{\n  "model": "free",\t"messages": [ {"role":"user","content":"é\\u00e9"} ]\n}';
    const res = await post(h, text, 'application/json; charset=utf-8');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ body: JSON.parse(text) });
    expect(h.parsed).toEqual([text]);
    expect(h.asked).toEqual([{ model: 'free', stream: false }]);
  });

  it('leaves to the parser what it is unsure of, which then answers as it always did', async () => {
    const h = await harness();
    const escapedKey = '{"m\\u006fdel":"busy"}';
    expect((await post(h, escapedKey)).json()).toEqual({ body: { model: 'busy' } });
    expect((await post(h, '{"model":"busy",}')).statusCode).toBe(400);
    expect((await post(h, '{"model":"busy","__proto__":{"a":1}}')).statusCode).toBe(400);
    expect(h.parsed).toEqual([
      escapedKey,
      '{"model":"busy",}',
      '{"model":"busy","__proto__":{"a":1}}',
    ]);
    expect(h.asked).toEqual([]);
  });

  it('reads nothing while disarmed, nor bodies too large or of another type', async () => {
    const h = await harness();
    h.armed.value = false;
    expect((await post(h, '{"model":"busy"}')).statusCode).toBe(200);
    h.armed.value = true;
    const large = JSON.stringify({ model: 'busy', pad: 'x'.repeat(PRESCAN_MAX_BYTES) });
    expect((await post(h, large)).statusCode).toBe(200);
    expect((await post(h, '{"model":"busy"}', 'text/plain')).statusCode).toBe(415);
    expect(h.asked).toEqual([]);
    expect(h.parsed).toHaveLength(2);
  });

  it('leaves a body over the limit to Fastify (413), unread', async () => {
    const h = await harness(64);
    const res = await post(h, JSON.stringify({ model: 'busy', pad: 'x'.repeat(100) }));
    expect(res.statusCode).toBe(413);
    expect(h.asked).toEqual([]);
  });

  it('reads a body that arrives in pieces, and goes on serving the connection', async () => {
    const h = await harness();
    const port = (h.sut.server.address() as { port: number }).port;
    const socket = connect(port, '127.0.0.1');
    let answers = '';
    socket.on('data', (b: Buffer) => (answers += b.toString('latin1')));
    const head = (body: string): string =>
      `POST ${PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const busy = '{"model":"busy","stream":true}';
    socket.write(head(busy) + busy.slice(0, 9));
    await waitFor(() => h.seen > 0, 'the prescan seeing the request');
    socket.write(busy.slice(9));
    await waitFor(() => answers.includes('refused'), 'the 503');
    const free = '{"model":"free"}';
    socket.write(head(free) + free);
    await waitFor(() => answers.includes('"body"'), 'the 200');
    socket.destroy();
    expect(answers.match(/^HTTP\/1\.1 \d+/gm)).toEqual(['HTTP/1.1 503', 'HTTP/1.1 200']);
    expect(h.asked).toEqual([
      { model: 'busy', stream: true },
      { model: 'free', stream: false },
    ]);
    expect(h.parsed).toEqual([free]);
  });

  it('passes a body cut short by the client on to the parser as an error', async () => {
    const h = await harness();
    const port = (h.sut.server.address() as { port: number }).port;
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(
      `POST ${PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":"busy"`,
    );
    await waitFor(() => h.seen > 0, 'the prescan seeing the request');
    socket.destroy();
    await waitFor(() => h.errors.length > 0, "the parser's error");
    expect(h.errors).toEqual([400]);
    // The server goes on serving, and nothing was refused or parsed from half a body.
    expect((await post(h, '{"model":"busy"}')).statusCode).toBe(503);
    expect(h.asked).toEqual([{ model: 'busy', stream: false }]);
    expect(h.parsed).toEqual([]);
  });
});
