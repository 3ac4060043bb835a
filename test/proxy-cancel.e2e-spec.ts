import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { chat, metricValue } from './support/http';
import { Heartbeat } from './support/nats-server';
import { NATS_URL, waitFor } from './support/processes';

/**
 * A client that gives up on a unary request: the frontend stops the worker's call at once (the
 * request leaves dynamo_frontend_inflight_requests long before the worker would have answered),
 * counts nothing as an upstream error, and logs no error.
 */
describe('a client cancelling a unary request', () => {
  // At speedup 1, 2,000 tokens take ~10 s: the request is surely in flight when cancelled.
  const sys = useSystem({ workers: [['--speedup', '1']], frontend: [] });
  let beat: Heartbeat;
  const inflight = () =>
    metricValue(sys.fe.url, 'dynamo_frontend_inflight_requests', { model: MODEL });
  const upstreamErrors = async () =>
    (await metricValue(sys.fe.url, 'dynamo_frontend_requests_total', {
      model: MODEL,
      endpoint: 'chat_completions',
      request_type: 'unary',
      status: 'error',
      error_type: 'upstream',
    })) ?? 0;

  beforeAll(async () => {
    beat = await Heartbeat.start(NATS_URL, sys.namespace);
    beat.set({ worker_id: 'slow', endpoint: sys.worker.url });
    await waitFor(async () => (await chat(sys.fe.url)).status === 200, 'worker known');
  });

  afterAll(async () => {
    await beat?.close();
    expect(sys.fe?.proc.output ?? '').not.toMatch(/"level":50/);
  });

  it('aborts the call to the worker and counts no upstream error', async () => {
    const errorsBefore = await upstreamErrors();
    const long = (url: string, signal: AbortSignal) =>
      fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: MODEL,
          messages: [{ role: 'user', content: 'hi' }],
          max_tokens: 2000,
        }),
        signal,
      });
    const controller = new AbortController();
    const sent = long(sys.fe.url, controller.signal);
    await waitFor(async () => (await inflight()) === 1, 'request in flight');
    // The same request straight to the worker, sent now: it measures "before the worker would
    // have answered" by order of events instead of by a clock.
    const referenceStop = new AbortController();
    let referenceAnswered = false;
    const reference = long(sys.worker.url, referenceStop.signal)
      .then((res) => res.text())
      .then(() => (referenceAnswered = true))
      .catch(() => undefined);
    controller.abort();
    await expect(sent).rejects.toThrow();
    await waitFor(async () => (await inflight()) === 0, 'request no longer in flight');
    expect(referenceAnswered).toBe(false);
    referenceStop.abort();
    await reference;
    expect(await upstreamErrors()).toBe(errorsBefore);
    // The worker is free again: a new request is answered normally.
    expect((await chat(sys.fe.url)).status).toBe(200);
  });
});
