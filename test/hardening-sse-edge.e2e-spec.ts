import { MODEL } from './support/bus';
import { FakeWorker, sleep } from './support/fake-worker';
import { useSystem } from './support/fixtures';
import { chat } from './support/http';
import { waitFor } from './support/processes';

const WHOLE_EVENT = 'data: {"id":"c1","choices":[{"delta":{"content":"Hel"}}]}\n\n';
const HALF_EVENT = 'data: {"id":"c1","choices":[{"delta":{"con';

/**
 * Issue 11 item 10: a worker whose stream breaks in the middle of an SSE event. The frontend's
 * `error` event must start after a clean event boundary, so that a client's SSE parser reads it
 * as an event of its own instead of glued onto the half-relayed line.
 */
describe('a stream that breaks mid-event', () => {
  const sys = useSystem({ bus: true, frontend: [] });
  let worker: FakeWorker;

  beforeAll(async () => {
    worker = await FakeWorker.start(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(WHOLE_EVENT);
      res.write(HALF_EVENT);
      // Let the half event reach the client, then reset the connection.
      await sleep(200);
      res.socket?.resetAndDestroy();
    });
    sys.bus.report(sys.fe.namespace, { worker_id: 'breaks', endpoint: worker.url });
    await waitFor(async () => {
      const list = (await (await fetch(`${sys.fe.url}/v1/models`)).json()) as {
        data: Array<{ id: string }>;
      };
      return list.data.some((m) => m.id === MODEL);
    }, 'model listed');
  });

  afterAll(async () => {
    await worker?.stop();
  });

  it('relays what arrived, then ends the event before its error event', async () => {
    const answer = await chat(sys.fe.url, { stream: true });
    expect(answer.status).toBe(200);
    expect(answer.text.startsWith(WHOLE_EVENT + HALF_EVENT)).toBe(true);
    const events = answer.text.split('\n\n').filter((e) => e !== '');
    expect(events).toHaveLength(3);
    expect(events[1]).toBe(HALF_EVENT);
    const error = JSON.parse(events[2].replace(/^data: /, '')) as { error: unknown };
    expect(error.error).toMatchObject({ type: 'upstream_error', code: 502 });
    expect(answer.text.endsWith('\n\n')).toBe(true);
  });
});
