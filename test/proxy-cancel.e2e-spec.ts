import { MODEL } from './support/bus';
import { chat, metricValue } from './support/http';
import { Heartbeat } from './support/nats-server';
import {
  FrontendProcess,
  NATS_URL,
  startFrontend,
  startWorker,
  uniqueNamespace,
  waitFor,
  WorkerProcess,
} from './support/processes';

/**
 * A client that gives up on a unary request: the frontend stops the worker's call at once (the
 * request leaves dynamo_frontend_inflight_requests long before the worker would have answered),
 * counts nothing as an upstream error, and logs no error.
 */
describe('a client cancelling a unary request', () => {
  let beat: Heartbeat;
  let worker: WorkerProcess;
  let fe: FrontendProcess;
  const ns = uniqueNamespace('pcancel');
  const inflight = () => metricValue(fe.url, 'dynamo_frontend_inflight_requests', { model: MODEL });
  const upstreamErrors = async () =>
    (await metricValue(fe.url, 'dynamo_frontend_requests_total', {
      model: MODEL,
      endpoint: 'chat_completions',
      request_type: 'unary',
      status: 'error',
      error_type: 'upstream',
    })) ?? 0;

  beforeAll(async () => {
    // At speedup 1, 2,000 tokens take ~10 s: the request is surely in flight when cancelled.
    worker = await startWorker(['--speedup', '1']);
    fe = await startFrontend([], ns);
    beat = await Heartbeat.start(NATS_URL, ns);
    beat.set({ worker_id: 'slow', endpoint: worker.url });
    await waitFor(async () => (await chat(fe.url)).status === 200, 'worker known');
  });

  afterAll(async () => {
    await beat?.close();
    // Stop first: a failed expectation must not leave the processes running.
    await Promise.all([fe?.proc.stop(), worker?.proc.stop()]);
    expect(fe?.proc.output ?? '').not.toMatch(/"level":50/);
  });

  it('aborts the call to the worker and counts no upstream error', async () => {
    const errorsBefore = await upstreamErrors();
    const controller = new AbortController();
    const sent = fetch(`${fe.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 2000,
      }),
      signal: controller.signal,
    });
    await waitFor(async () => (await inflight()) === 1, 'request in flight');
    const cancelledAt = Date.now();
    controller.abort();
    await expect(sent).rejects.toThrow();
    await waitFor(async () => (await inflight()) === 0, 'request no longer in flight');
    expect(Date.now() - cancelledAt).toBeLessThan(3000);
    expect(await upstreamErrors()).toBe(errorsBefore);
    // The worker is free again: a new request is answered normally.
    expect((await chat(fe.url)).status).toBe(200);
  });
});
