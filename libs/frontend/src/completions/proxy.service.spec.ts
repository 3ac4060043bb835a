import Fastify, { FastifyInstance, FastifyReply } from 'fastify';
import { errors as undiciErrors } from 'undici';
import { FrontendConfig } from '../config/frontend-config';
import { PriorityClass } from '../config/priority';
import { setRequestPriority } from '../priority/request-priority';
import { RequestMetricsService } from '../request-metrics/request-metrics.service';
import { TtftPredictor } from '../ttft-prediction/ttft-predictor.service';
import { OutlierEjection } from '../worker-monitor/outlier-ejection';
import { WorkerEntry } from '../worker-monitor/worker-entry';
import { UpstreamError } from './errors/upstream.error';
import { ProxyService, WORKER_HEADER } from './proxy.service';
import { Lease, RouterService } from './routing/router.service';
import { HOP_HEADER, UpstreamClient } from './upstream/upstream.client';
import { WholeAnswer } from './upstream/whole-answer.handler';

const worker = (id: string): WorkerEntry => new WorkerEntry(id, 'm', `http://${id}`, 1, 0);

function leaseOf(
  w: WorkerEntry,
): Lease & { accepted: jest.Mock; firstToken: jest.Mock; release: jest.Mock } {
  return {
    worker: w,
    tokensAhead: 0,
    kvUsage: 0,
    leasedAtMs: 0,
    objective: null,
    accepted: jest.fn(),
    firstToken: jest.fn(),
    release: jest.fn(),
  };
}

describe('ProxyService (unary answers)', () => {
  let fastify: FastifyInstance;
  let router: { acquire: jest.Mock; acquireOther: jest.Mock };
  let answers: Map<string, () => Promise<WholeAnswer>>;
  let sent: Array<{ worker: string; path: string; body: string | Buffer }>;
  let metrics: Record<'firstByte' | 'finished' | 'answered' | 'admitted' | 'retried', jest.Mock> & {
    inflight: { inc: jest.Mock; dec: jest.Mock };
  };
  let thrown: unknown;
  let ejection: { succeeded: jest.Mock; failed: jest.Mock };
  let sut: ProxyService;
  let current: FastifyReply;

  beforeEach(async () => {
    router = { acquire: jest.fn(), acquireOther: jest.fn() };
    answers = new Map();
    sent = [];
    const upstream = {
      postWhole: (w: WorkerEntry, path: string, body: string | Buffer) => {
        sent.push({ worker: w.id, path, body });
        return { answer: (answers.get(w.id) as () => Promise<WholeAnswer>)(), abort: jest.fn() };
      },
    };
    metrics = {
      firstByte: jest.fn(),
      finished: jest.fn(),
      answered: jest.fn(),
      admitted: jest.fn(),
      retried: jest.fn(),
      inflight: { inc: jest.fn(), dec: jest.fn() },
    };
    thrown = undefined;
    ejection = { succeeded: jest.fn(), failed: jest.fn() };
    sut = new ProxyService(
      new FrontendConfig({ upstreamTimeoutMs: 1000, upstreamRetries: 2 }),
      router as unknown as RouterService,
      upstream as unknown as UpstreamClient,
      metrics as unknown as RequestMetricsService,
      { observe: jest.fn() } as unknown as TtftPredictor,
      ejection as unknown as OutlierEjection,
    );
    fastify = Fastify();
    // As admission does: the class goes beside the request before the route runs.
    fastify.addHook('preHandler', (request, _reply, done) => {
      const c = request.headers['x-class'];
      if (typeof c === 'string') setRequestPriority(request, c as PriorityClass);
      done();
    });
    fastify.post('/v1/chat/completions', async (request, reply) => {
      current = reply;
      try {
        await sut.forward(
          'chat_completions',
          '/v1/chat/completions',
          request.body as { model: string },
          reply,
        );
      } catch (err) {
        thrown = err;
        return reply.code(599).send();
      }
      return reply;
    });
    await fastify.ready();
  });
  afterEach(() => fastify.close());

  const post = (headers: Record<string, string> = {}) =>
    fastify.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers,
      payload: { model: 'm', messages: [{ role: 'user', content: 'hello' }], top_k: 3 },
    });

  const ok =
    (body: string): (() => Promise<WholeAnswer>) =>
    () =>
      Promise.resolve({
        statusCode: 200,
        contentType: 'application/json',
        body: Buffer.from(body),
      });

  it('sends the whole body to the leased worker and relays its answer, naming the worker', async () => {
    const lease = leaseOf(worker('w1'));
    router.acquire.mockReturnValue(lease);
    answers.set('w1', ok('{"id":"x"}'));
    const res = await post();
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('{"id":"x"}');
    expect(res.headers[WORKER_HEADER]).toBe('w1');
    expect(JSON.parse(String(sent[0].body))).toMatchObject({ model: 'm', top_k: 3 });
    expect(sent[0]).toMatchObject({ worker: 'w1', path: '/v1/chat/completions' });
    // A unary answer comes whole: its worker's reports are trusted from the moment it is sent.
    expect(lease.accepted).toHaveBeenCalled();
    expect(lease.firstToken).toHaveBeenCalled();
    expect(lease.release).toHaveBeenCalledTimes(1);
    expect(metrics.answered).toHaveBeenCalledWith('m', 'chat_completions', false, '');
    expect(metrics.admitted).toHaveBeenCalledWith('m');
    expect(sut.active).toBe(0);
  });

  it('never sends on a request whose client left while it was queued, and frees its lease', async () => {
    const lease = leaseOf(worker('w1'));
    answers.set('w1', ok('{"id":"x"}'));
    // The queue serves it in the same turn as its client goes away.
    router.acquire.mockImplementation(() => {
      current.raw.destroy();
      return new Promise((resolve) => setImmediate(() => resolve(lease)));
    });
    await post().catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([]);
    expect(lease.release).toHaveBeenCalledTimes(1);
    expect(sut.active).toBe(0);
  });

  it('tries one other worker when the first fails before answering', async () => {
    const first = leaseOf(worker('w1'));
    const second = leaseOf(worker('w2'));
    router.acquire.mockReturnValue(first);
    router.acquireOther.mockReturnValue(second);
    answers.set('w1', () =>
      Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
    );
    answers.set('w2', ok('{"id":"y"}'));
    const res = await post();
    expect(res.statusCode).toBe(200);
    expect(res.headers[WORKER_HEADER]).toBe('w2');
    expect(router.acquireOther).toHaveBeenCalledWith(
      new Set([first.worker]),
      expect.any(Number),
      'standard',
      0,
      { id: 'default', weight: 1 },
    );
    expect(metrics.retried).toHaveBeenCalledWith('m', 'connect');
    expect(first.release).toHaveBeenCalledTimes(1);
    expect(second.release).toHaveBeenCalledTimes(1);
    expect(second.accepted).toHaveBeenCalled();
    expect(metrics.admitted).toHaveBeenCalledTimes(1); // one request, though two workers
  });

  it('sends again to the same worker when it closed a kept-alive connection under the request', async () => {
    const lease = leaseOf(worker('w1'));
    router.acquire.mockReturnValue(lease);
    router.acquireOther.mockReturnValue(undefined);
    let attempts = 0;
    answers.set('w1', () =>
      ++attempts === 1
        ? Promise.reject(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }))
        : ok('{"id":"z"}')(),
    );
    const res = await post();
    expect(res.statusCode).toBe(200);
    expect(sent.map((x) => x.worker)).toEqual(['w1', 'w1']);
    expect(lease.release).toHaveBeenCalledTimes(1);
  });

  it('does not send again to a worker that refused the connection, when no other is free', async () => {
    router.acquire.mockReturnValue(leaseOf(worker('w1')));
    router.acquireOther.mockReturnValue(undefined);
    answers.set('w1', () =>
      Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
    );
    await post();
    expect(thrown).toBeInstanceOf(UpstreamError);
    expect(sent).toHaveLength(1);
  });

  it("asks the router for a worker free for the request's class, on the retry too", async () => {
    router.acquire.mockReturnValue(leaseOf(worker('w1')));
    router.acquireOther.mockReturnValue(leaseOf(worker('w2')));
    answers.set('w1', () => Promise.reject(new Error('connect ECONNREFUSED')));
    answers.set('w2', ok('{"id":"y"}'));
    expect((await post({ 'x-class': 'critical' })).statusCode).toBe(200);
    expect(router.acquire).toHaveBeenCalledWith(
      'm',
      expect.any(Number),
      expect.anything(),
      'critical',
      0,
      'chat_completions',
      { id: 'default', weight: 1 },
    );
    expect(router.acquireOther).toHaveBeenCalledWith(
      new Set([expect.objectContaining({ id: 'w1' })]),
      expect.any(Number),
      'critical',
      0,
      { id: 'default', weight: 1 },
    );
  });

  it('sends a 5xx answer on to untried workers, at most --upstream-retries of them', async () => {
    const leases = ['w1', 'w2', 'w3'].map((id) => leaseOf(worker(id)));
    router.acquire.mockReturnValue(leases[0]);
    const asked: string[][] = [];
    router.acquireOther.mockImplementation((tried: Set<WorkerEntry>) => {
      asked.push([...tried].map((w) => w.id));
      return leases[asked.length];
    });
    const failing = () =>
      Promise.resolve({ statusCode: 503, contentType: 'text/plain', body: Buffer.from('x') });
    for (const id of ['w1', 'w2', 'w3']) answers.set(id, failing);
    await post();
    expect(sent.map((x) => x.worker)).toEqual(['w1', 'w2', 'w3']);
    // Never a worker tried before; the budget (2) is spent after the second: no third.
    expect(asked).toEqual([['w1'], ['w1', 'w2']]);
    expect(metrics.retried.mock.calls).toEqual([
      ['m', 'status_5xx'],
      ['m', 'status_5xx'],
    ]);
    expect(thrown).toMatchObject({ status: 502, message: 'Worker w3 answered 503' });
    for (const lease of leases) expect(lease.release).toHaveBeenCalledTimes(1);
    // Each failure is told to outlier ejection as its worker's.
    expect(ejection.failed.mock.calls.map(([w, r]) => `${(w as WorkerEntry).id} ${r}`)).toEqual([
      'w1 status_5xx',
      'w2 status_5xx',
      'w3 status_5xx',
    ]);
    expect(ejection.succeeded).not.toHaveBeenCalled();
  });

  it('does not retry a worker that timed out', async () => {
    router.acquire.mockReturnValue(leaseOf(worker('w1')));
    router.acquireOther.mockReturnValue(leaseOf(worker('w2')));
    answers.set('w1', () => Promise.reject(new undiciErrors.HeadersTimeoutError()));
    await post();
    expect(thrown).toMatchObject({ status: 504 });
    expect(sent).toHaveLength(1);
    expect(router.acquireOther).not.toHaveBeenCalled();
  });

  it("turns a worker's 5xx into a 502 upstream error for the filter to answer and count", async () => {
    const lease = leaseOf(worker('w1'));
    router.acquire.mockReturnValue(lease);
    router.acquireOther.mockReturnValue(undefined);
    answers.set('w1', () =>
      Promise.resolve({ statusCode: 500, contentType: 'text/plain', body: Buffer.from('x') }),
    );
    await post();
    expect(thrown).toBeInstanceOf(UpstreamError);
    expect(thrown).toMatchObject({ status: 502, message: 'Worker w1 answered 500' });
    expect(lease.release).toHaveBeenCalledTimes(1);
    expect(metrics.answered).not.toHaveBeenCalled();
  });

  it("passes a worker's 4xx through as the client's fault", async () => {
    router.acquire.mockReturnValue(leaseOf(worker('w1')));
    answers.set('w1', () =>
      Promise.resolve({
        statusCode: 422,
        contentType: 'application/json',
        body: Buffer.from('{"e":1}'),
      }),
    );
    const res = await post();
    expect(res.statusCode).toBe(422);
    expect(res.body).toBe('{"e":1}');
    expect(metrics.answered).toHaveBeenCalledWith('m', 'chat_completions', false, 'validation');
  });

  it('refuses a request another frontend proxied here (508), before taking a worker', async () => {
    await post({ [HOP_HEADER]: '1' });
    expect(thrown).toMatchObject({ status: 508 });
    expect(router.acquire).not.toHaveBeenCalled();
  });
});
