import { MODEL, TestBus } from './support/bus';
import { FakeWorker } from './support/fake-worker';
import { OVERLOAD_BODY, post } from './support/http';
import { FrontendProcess, startFrontend, waitFor } from './support/processes';
import { rawRequest } from './support/raw-http';

const PATH = '/v1/chat/completions';
const FREE = 'free-model';
const MESSAGES = [{ role: 'user', content: 'hi' }];

/**
 * While a model is refused, the frontend answers its 503 from the body's bytes, before parsing
 * (issue 12 item 8). The answer must be the one the parsed body would get: bodies the parser
 * refuses keep their 4xx, bodies the byte reader is unsure of still get the 503, and admitted
 * bodies reach the worker as the exact bytes the client sent.
 */
describe('early refusal from the bytes of the body', () => {
  let bus: TestBus;
  let worker: FakeWorker;
  let fe: FrontendProcess;
  let port: number;
  let reporting: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    bus = await TestBus.connect();
    worker = await FakeWorker.start((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"x","choices":[]}');
    });
    fe = await startFrontend([
      '--admission-control',
      'token-capacity',
      '--active-decode-blocks-threshold',
      '0.8',
    ]);
    port = Number(new URL(fe.url).port);
    // Reported every second, as workers do: the cases outlive --worker-ttl-ms together.
    const heartbeat = (): void => {
      bus.report(fe.namespace, {
        worker_id: 'busy',
        endpoint: worker.url,
        active_decode_blocks: 95,
      });
      bus.report(fe.namespace, { worker_id: 'free', endpoint: worker.url, model: FREE });
    };
    heartbeat();
    reporting = setInterval(heartbeat, 1000);
    await waitFor(
      async () =>
        (await post(`${fe.url}${PATH}`, { model: FREE, messages: MESSAGES })).status === 200,
      'free model routed',
    );
    await waitFor(
      async () =>
        (await post(`${fe.url}${PATH}`, { model: MODEL, messages: MESSAGES })).status === 503,
      'busy model refused',
    );
  }, 180_000);

  afterAll(async () => {
    clearInterval(reporting);
    await fe?.proc.stop();
    await worker?.stop();
    await bus?.close();
  });

  const send = (body: string, contentType = 'application/json') =>
    post(`${fe.url}${PATH}`, body, { 'content-type': contentType });

  it('refuses the busy model however its body is spelled', async () => {
    for (const body of [
      JSON.stringify({ model: MODEL, messages: MESSAGES, stream: true }),
      `\r\n { "messages" : [ ] ,\t"model"\n:\n${JSON.stringify(MODEL)} } `,
      `{"model":"x","model":${JSON.stringify(MODEL)},"messages":[]}`,
      // Escapes the byte reader does not decode: the parse decides, as before.
      `{"m\\u006fdel":${JSON.stringify(MODEL)},"messages":[]}`,
      `\ufeff{"model":${JSON.stringify(MODEL)},"messages":[]}`,
      JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x'.repeat(100_000) }] }),
    ]) {
      const answer = await send(body);
      expect({ body: body.slice(0, 60), status: answer.status, text: answer.text }).toEqual({
        body: body.slice(0, 60),
        status: 503,
        text: OVERLOAD_BODY,
      });
    }
    expect(
      (await send(JSON.stringify({ model: MODEL }), 'application/json; charset=UTF-8')).status,
    ).toBe(503);
  });

  it('refuses a chunked body too', async () => {
    const body = JSON.stringify({ model: MODEL, messages: MESSAGES });
    const request =
      `POST ${PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
      `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
      `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const answer = await rawRequest(port, Buffer.from(request));
    expect(answer.status).toBe(503);
    expect(answer.body).toBe(OVERLOAD_BODY);
  });

  it('keeps the 4xx of a body the parser refuses, busy model or not', async () => {
    const model = JSON.stringify(MODEL);
    const cases: Array<[string, string, number]> = [
      [`{"model":${model},"messages":[],}`, 'application/json', 400],
      [`{"model":${model}`, 'application/json', 400],
      [`{"model":${model},"__proto__":{"x":1}}`, 'application/json', 400],
      [`{"model":${model},"a":{"constructor":{"prototype":{}}}}`, 'application/json', 400],
      [`{"model":${model},"a":${'['.repeat(200)}${']'.repeat(200)}}`, 'application/json', 400],
      [JSON.stringify({ model: MODEL }), 'text/plain', 415],
    ];
    for (const [body, type, status] of cases) {
      const answer = await send(body, type);
      expect({ body: body.slice(0, 60), status: answer.status }).toEqual({
        body: body.slice(0, 60),
        status,
      });
      expect((answer.json as { type?: string }).type).toBe('invalid_request_error');
    }
  });

  it("judges the bytes by the request's priority class: critical still reaches a worker free for it", async () => {
    // The busy model's worker is at 95 %: over 0.8 and 0.64 (sheddable), not over 0.96 (critical).
    const body = JSON.stringify({ model: MODEL, messages: MESSAGES });
    const as = (priority: string) =>
      post(`${fe.url}${PATH}`, body, {
        'content-type': 'application/json',
        'x-sluice-priority': priority,
      });
    const seen = worker.seen.length;
    expect((await as('critical')).status).toBe(200);
    expect(worker.seen.slice(seen).map((r) => r.body)).toEqual([body]);
    expect((await as('sheddable')).text).toBe(OVERLOAD_BODY);
    expect((await as('urgent')).status).toBe(400);
  });

  it('admits the other models, forwarding the bytes as sent', async () => {
    const nested = `{ "model" : "${FREE}", "meta": {"model": ${JSON.stringify(MODEL)}},\n "messages": [{"role":"user","content":"h\\u00e9"}] }`;
    const seen = worker.seen.length;
    const answer = await send(nested);
    expect(answer.status).toBe(200);
    expect(worker.seen.slice(seen).map((r) => r.body)).toEqual([nested]);
    // A model never seen is the parse's 404, not a refusal.
    expect((await send(JSON.stringify({ model: 'nobody', messages: MESSAGES }))).status).toBe(404);
  });
});
