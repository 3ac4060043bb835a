import { ArgumentsHost } from '@nestjs/common';
import { OVERLOAD_BODY } from '@sluice/testkit';
import Fastify, { FastifyInstance } from 'fastify';
import { FrontendConfig } from '../config/frontend-config';
import { BusySpells } from '../worker-monitor/busy-spells';
import {
  answerThroughFilter,
  fakeRequestMetrics,
  fastifyAdapterHost,
  RequestMetricsMock,
} from '../request-metrics/filter-spec.fixture';
import { ServiceOverloadedError } from './errors/service-overloaded.error';
import { ShuttingDownError } from './errors/shutting-down.error';
import { overloadRefusal } from './refusal';
import { RetryAfter } from './retry-after';
import { ServiceOverloadedFilter } from './service-overloaded.filter';

describe('ServiceOverloadedFilter', () => {
  let fastify: FastifyInstance;
  let metrics: RequestMetricsMock;
  let sut: ServiceOverloadedFilter;

  /** One POST of `body`, its error handed to the filter as Nest does when a guard throws it. */
  const serve = (error: ServiceOverloadedError | ShuttingDownError, body: object) =>
    answerThroughFilter(fastify, sut, error, '/v1/completions', body);

  beforeEach(() => {
    fastify = Fastify();
    metrics = fakeRequestMetrics();
    const spells = { expectedWaitMs: () => undefined } as unknown as BusySpells;
    const retryAfter = new RetryAfter(new FrontendConfig({ retryAfterSecs: 2 }), spells);
    sut = new ServiceOverloadedFilter(fastifyAdapterHost(), metrics, retryAfter);
  });
  afterEach(() => fastify.close());

  it('answers the overload error with the bytes and headers of docs/api.md#errors, and counts it', async () => {
    const res = await serve(new ServiceOverloadedError('m'), { model: 'm' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['retry-after']).toBe('2');
    expect(res.headers['x-sluice-reject-reason']).toBe('all_workers_busy');
    expect(res.body).toBe(OVERLOAD_BODY);
    expect(metrics.rejected).toHaveBeenCalledWith('m', 'completions', 'standard');
    expect(metrics.refused).toHaveBeenCalledWith('m', 'completions', 'all_workers_busy');
    expect(metrics.answered).toHaveBeenCalledWith('m', 'completions', false, 'overload');
  });

  it("answers the router queue's refusal with its own message, as a rejection", async () => {
    const full = overloadRefusal(
      'Service temporarily unavailable: the router queue is full',
      'all_workers_busy',
    );
    const res = await serve(new ServiceOverloadedError('m', full), { model: 'm', stream: true });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.json()).toEqual({ message: full.message, type: 'service_unavailable', code: 503 });
    expect(metrics.answered).toHaveBeenCalledWith('m', 'completions', true, 'overload');
  });

  it('sends the measured Retry-After of the refused model with --retry-after-secs auto', async () => {
    const expectedWaitMs = jest.fn(() => 4200);
    const spells = { expectedWaitMs } as unknown as BusySpells;
    const auto = new RetryAfter(new FrontendConfig({ retryAfterSecs: 'auto' }), spells);
    sut = new ServiceOverloadedFilter(fastifyAdapterHost(), metrics, auto);
    const res = await serve(new ServiceOverloadedError('m'), { model: 'm' });
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body).toBe(OVERLOAD_BODY);
    expect(expectedWaitMs).toHaveBeenCalledWith('m', expect.any(Number));
  });

  it('answers a drain without Retry-After and not as a rejection', async () => {
    const res = await serve(new ShuttingDownError(), { model: 'm' });
    expect(res.statusCode).toBe(503);
    expect(res.headers).not.toHaveProperty('retry-after');
    expect(res.json()).toMatchObject({ type: 'service_unavailable', code: 503 });
    expect(metrics.rejected).not.toHaveBeenCalled();
    expect(metrics.answered).toHaveBeenCalledWith('m', 'completions', false, 'unavailable');
  });

  it('leaves errors outside HTTP alone', () => {
    const host = { getType: () => 'rpc' } as unknown as ArgumentsHost;
    expect(() => sut.catch(new ServiceOverloadedError('m'), host)).not.toThrow();
    expect(metrics.answered).not.toHaveBeenCalled();
  });
});
