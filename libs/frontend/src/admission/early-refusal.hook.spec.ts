import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { OVERLOAD_BODY } from '@sluice/testkit';
import Fastify, { FastifyInstance } from 'fastify';
import { FrontendConfig } from '../config/frontend-config';
import { PriorityClass } from '../config/priority';
import { requestPriority } from '../priority/request-priority';
import { RequestMetricsService } from '../request-metrics/request-metrics.service';
import { TenantDirectory } from '../tenants/tenant-directory.service';
import { TenantIdentity } from '../tenants/tenant-identity';
import { TenantLimits } from '../tenants/tenant-limits.service';
import { AdmissionDecision } from './admission-decision.service';
import { BusyModels } from './busy-models';
import { RetryAfter } from './retry-after';
import { BusySpells } from '../worker-monitor/busy-spells';
import { installAdmission } from './early-refusal.hook';
import { DRAINING, OVERLOADED } from './refusal';

describe('installAdmission (the early refusal hook)', () => {
  let fastify: FastifyInstance;
  let metrics: {
    modelLabel: jest.Mock;
    rejected: jest.Mock;
    answered: jest.Mock;
    refused: jest.Mock;
  };
  let limits: { overloaded: jest.Mock };
  let handled: number;
  let decided: Array<PriorityClass | undefined>;

  /**
   * A Fastify app with the hook installed, then the routes a Nest app would register. The model
   * `critical-only` is refused for every class but critical.
   */
  async function serve(
    retryAfterSecs: number | 'auto' = 1,
    priorityHeader: string | null = 'x-sluice-priority',
  ): Promise<void> {
    fastify = Fastify();
    metrics = {
      modelLabel: jest.fn((m: unknown) => String(m)),
      rejected: jest.fn(),
      answered: jest.fn(),
      refused: jest.fn(),
    };
    limits = { overloaded: jest.fn() };
    decided = [];
    const decision = {
      decide: (body: { model?: string } | null, c?: PriorityClass) => {
        decided.push(c);
        if (body?.model === 'critical-only') return c === 'critical' ? null : OVERLOADED;
        return body?.model === 'busy' ? OVERLOADED : body?.model === 'draining' ? DRAINING : null;
      },
    };
    // With `auto`: a worker of model `busy` is expected free in 2.5 s.
    const spells = {
      expectedWaitMs: (model: string) => (model === 'busy' ? 2500 : undefined),
    } as unknown as BusySpells;
    const deps = new Map<unknown, unknown>([
      [AdmissionDecision, decision],
      [RequestMetricsService, metrics],
      [FrontendConfig, new FrontendConfig({ retryAfterSecs, priorityHeader })],
      [RetryAfter, new RetryAfter(new FrontendConfig({ retryAfterSecs }), spells)],
      // The byte prescan stays disarmed: these cases are answered from the parsed body.
      [BusyModels, { any: false, anyFor: () => false }],
      [TenantIdentity, new TenantIdentity(new FrontendConfig(), new TenantDirectory())],
      [TenantLimits, limits],
    ]);
    const app = {
      get: (token: unknown) => deps.get(token),
      getHttpAdapter: () => ({ getInstance: () => fastify }),
      getHttpServer: () => fastify.server,
    } as unknown as NestFastifyApplication;
    const sut = installAdmission;
    // Answers before Fastify are the prescan's, disarmed here (overload-prescan.spec.ts).
    sut(app, () => {
      throw new Error('the prescan answered');
    });
    handled = 0;
    const handler = (request: object): Promise<object> => {
      handled++;
      return Promise.resolve({ ok: true, priority: requestPriority(request) });
    };
    fastify.post('/v1/chat/completions', handler);
    fastify.post(
      '/v1/embeddings',
      {
        preHandler: (_req, reply, _done) => void reply.code(418).send(),
      },
      handler,
    );
    fastify.get('/v1/models', handler);
    await fastify.ready();
  }

  const post = (url: string, body: object, headers: Record<string, string> = {}) =>
    fastify.inject({ method: 'POST', url, payload: body, headers });

  afterEach(() => fastify.close());

  it('answers the overload 503 of docs/api.md#errors before the route, and counts it as a rejection', async () => {
    await serve();
    const res = await post('/v1/chat/completions', { model: 'busy', stream: true });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['retry-after']).toBe('1');
    expect(res.headers['x-sluice-reject-reason']).toBe('all_workers_busy');
    expect(res.body).toBe(OVERLOAD_BODY);
    expect(handled).toBe(0);
    expect(metrics.rejected).toHaveBeenCalledWith('busy', 'chat_completions', 'standard');
    expect(metrics.answered).toHaveBeenCalledWith('busy', 'chat_completions', true, 'overload');
    expect(limits.overloaded).toHaveBeenCalledWith('default');
  });

  it('judges the request by the class in its priority header, and keeps the class beside it', async () => {
    await serve();
    const body = { model: 'critical-only' };
    const critical = await post('/v1/chat/completions', body, { 'x-sluice-priority': 'critical' });
    expect(critical.json()).toEqual({ ok: true, priority: 'critical' });
    expect((await post('/v1/chat/completions', body)).statusCode).toBe(503);
    const shed = await post('/v1/chat/completions', body, { 'x-sluice-priority': 'sheddable' });
    expect(shed.statusCode).toBe(503);
    expect(decided).toEqual(['critical', 'standard', 'sheddable']);
    expect(metrics.rejected.mock.calls).toEqual([
      ['critical-only', 'chat_completions', 'standard'],
      ['critical-only', 'chat_completions', 'sheddable'],
    ]);
  });

  it('leaves a request with an invalid priority header to the guard (its 400), undecided', async () => {
    await serve();
    for (const value of ['urgent', 'Critical', '', 'critical, critical']) {
      const res = await post(
        '/v1/chat/completions',
        { model: 'busy' },
        { 'x-sluice-priority': value },
      );
      expect(res.statusCode).toBe(200);
    }
    expect(decided).toEqual([]);
    expect(metrics.answered).not.toHaveBeenCalled();
  });

  it('reads another header, or none, as --priority-header says', async () => {
    await serve(1, 'x-tier');
    const body = { model: 'critical-only' };
    expect((await post('/v1/chat/completions', body, { 'x-tier': 'critical' })).statusCode).toBe(
      200,
    );
    const old = await post('/v1/chat/completions', body, { 'x-sluice-priority': 'critical' });
    expect(old.statusCode).toBe(503);
    await fastify.close();
    await serve(1, null);
    const ignored = await post('/v1/chat/completions', body, { 'x-sluice-priority': 'critical' });
    expect(ignored.statusCode).toBe(503);
    const invalid = await post(
      '/v1/chat/completions',
      { model: 'free' },
      { 'x-sluice-priority': 'x' },
    );
    expect(invalid.json()).toEqual({ ok: true, priority: 'standard' });
  });

  it('answers a drain with its 503, without Retry-After and not as a rejection', async () => {
    await serve();
    const res = await post('/v1/chat/completions', { model: 'draining' });
    expect(res.statusCode).toBe(503);
    expect(res.headers).not.toHaveProperty('retry-after');
    expect(res.rawPayload.equals(DRAINING.payload)).toBe(true);
    expect(metrics.rejected).not.toHaveBeenCalled();
    expect(limits.overloaded).not.toHaveBeenCalled();
    expect(metrics.answered).toHaveBeenCalledWith(
      'draining',
      'chat_completions',
      false,
      'unavailable',
    );
  });

  it('sends no Retry-After with --retry-after-secs 0', async () => {
    await serve(0);
    const res = await post('/v1/chat/completions', { model: 'busy' });
    expect(res.statusCode).toBe(503);
    expect(res.headers).not.toHaveProperty('retry-after');
  });

  it('sends the estimate for the refused model with --retry-after-secs auto, same body', async () => {
    await serve('auto');
    const res = await post('/v1/chat/completions', { model: 'busy' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('3');
    expect(res.body).toBe(OVERLOAD_BODY);
  });

  it('lets admitted requests, and routes other than the OpenAI POSTs, through untouched', async () => {
    await serve();
    expect((await post('/v1/chat/completions', { model: 'free' })).statusCode).toBe(200);
    expect((await fastify.inject({ method: 'GET', url: '/v1/models' })).statusCode).toBe(200);
    expect(handled).toBe(2);
    expect(metrics.answered).not.toHaveBeenCalled();
  });

  it("runs before a route's own preHandler, which still runs for admitted requests", async () => {
    await serve();
    expect((await post('/v1/embeddings', { model: 'busy' })).statusCode).toBe(503);
    expect((await post('/v1/embeddings', { model: 'free' })).statusCode).toBe(418);
  });
});
