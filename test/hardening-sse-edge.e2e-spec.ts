import OpenAI from 'openai';
import { MODEL } from './support/bus';
import { FakeWorker, sleep } from './support/fake-worker';
import { useSystem } from './support/fixtures';
import { chat } from './support/http';
import { waitFor } from './support/processes';

const WHOLE_EVENT = 'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n';
const HALF_EVENT = 'data: {"id":"c1","choices":[{"index":0,"delta":{"con';
/** A whole line ended by a lone CR: the event it begins is not ended yet. */
const CR_LINE = 'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"lo"}}]}\r';

/** How the fake worker breaks its stream, chosen by the request's message. */
const CUTS: Record<string, { tail: string; end: 'reset' | 'clean' }> = {
  'reset mid-line': { tail: HALF_EVENT, end: 'reset' },
  'clean end mid-line': { tail: HALF_EVENT, end: 'clean' },
  'reset after a lone CR': { tail: CR_LINE, end: 'reset' },
  'clean end after a lone CR': { tail: CR_LINE, end: 'clean' },
};

/**
 * Issue 41 item 4: a worker's stream that stops inside an SSE event (mid-line, or after a line
 * ended by a lone `\r`, whose event the client's parser still holds open). The frontend must
 * relay only whole events, drop the cut one, then send one well-formed error event and end, so
 * that the official `openai` SDK reports an APIError instead of a SyntaxError or, for a clean
 * end, a silently truncated answer.
 */
describe('a stream cut mid-event', () => {
  const sys = useSystem({ bus: true, frontend: [] });
  let worker: FakeWorker;
  let client: OpenAI;

  beforeAll(async () => {
    worker = await FakeWorker.start(async (req, res) => {
      const { messages } = JSON.parse(req.body) as { messages: Array<{ content: string }> };
      const cut = CUTS[messages[0].content];
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(WHOLE_EVENT);
      res.write(cut.tail);
      // Let the cut event reach the frontend first, then break off.
      await sleep(200);
      if (cut.end === 'reset') res.socket?.resetAndDestroy();
      else res.end();
    });
    client = new OpenAI({ baseURL: `${sys.fe.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    sys.bus.report(sys.fe.namespace, { worker_id: 'breaks', endpoint: worker.url });
    await waitFor(
      async () => (await client.models.list()).data.some((m) => m.id === MODEL),
      'model listed',
    );
  });

  afterAll(async () => {
    await worker?.stop();
  });

  it.each(Object.keys(CUTS))(
    '%s: relays the whole events, drops the cut one, then one error event and the end',
    async (how) => {
      const answer = await chat(sys.fe.url, {
        stream: true,
        messages: [{ role: 'user', content: how }],
      });
      expect(answer.status).toBe(200);
      expect(answer.text.startsWith(WHOLE_EVENT + 'data: {"error":')).toBe(true);
      const rest = answer.text.slice(WHOLE_EVENT.length);
      expect(rest.endsWith('}\n\n')).toBe(true);
      expect(rest.indexOf('\n')).toBe(rest.length - 2);
      const error = JSON.parse(rest.slice('data: '.length)) as { error: unknown };
      expect(error.error).toEqual({
        message: expect.stringContaining('Worker breaks') as unknown,
        type: 'upstream_error',
        code: 502,
      });
    },
  );

  it.each(Object.keys(CUTS))(
    '%s: the openai SDK reads the whole event, then an APIError',
    async (how) => {
      const stream = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: how }],
        stream: true,
      });
      const contents: string[] = [];
      let thrown: unknown;
      try {
        for await (const chunk of stream) contents.push(chunk.choices[0]?.delta?.content ?? '');
      } catch (err) {
        thrown = err;
      }
      expect(contents).toEqual(['Hel']);
      expect(thrown).toBeInstanceOf(OpenAI.APIError);
      expect((thrown as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
        type: 'upstream_error',
        code: 502,
      });
    },
  );
});
