import { ArgumentsHost } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { OVERLOAD_BODY } from '@sluice/testkit';
import Fastify, { FastifyInstance } from 'fastify';
import { FrontendConfig } from '../config/frontend-config';
import { RequestMetricsService } from '../request-metrics/request-metrics.service';
import { ServiceOverloadedError } from './errors/service-overloaded.error';
import { ShuttingDownError } from './errors/shutting-down.error';
import { overloadRefusal } from './refusal';
import { ServiceOverloadedFilter } from './service-overloaded.filter';

describe('ServiceOverloadedFilter', () => {
  let fastify: FastifyInstance;
  let metrics: { modelLabel: jest.Mock; rejected: jest.Mock; answered: jest.Mock };
  let sut: ServiceOverloadedFilter;

  /** A route that hands `error` to the filter, as Nest does when a guard or handler throws it. */
  async function serve(error: ServiceOverloadedError | ShuttingDownError): Promise<void> {
    fastify.post('/v1/completions', (request, reply) => {
      const host = {
        getType: () => 'http',
        switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
      } as unknown as ArgumentsHost;
      sut.catch(error, host);
    });
    await fastify.ready();
  }

  const post = (body: object) =>
    fastify.inject({ method: 'POST', url: '/v1/completions', payload: body });

  beforeEach(() => {
    fastify = Fastify();
    metrics = {
      modelLabel: jest.fn((m: unknown) => String(m)),
      rejected: jest.fn(),
      answered: jest.fn(),
    };
    const adapterHost = { httpAdapter: new FastifyAdapter() } as unknown as HttpAdapterHost;
    sut = new ServiceOverloadedFilter(
      adapterHost,
      metrics as unknown as RequestMetricsService,
      new FrontendConfig({ retryAfterSecs: 2 }),
    );
  });
  afterEach(() => fastify.close());

  it('answers the overload error with the bytes and headers of contract §3.1, and counts it', async () => {
    await serve(new ServiceOverloadedError('m'));
    const res = await post({ model: 'm' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['retry-after']).toBe('2');
    expect(res.body).toBe(OVERLOAD_BODY);
    expect(metrics.rejected).toHaveBeenCalledWith('m', 'completions');
    expect(metrics.answered).toHaveBeenCalledWith('m', 'completions', false, 'overload');
  });

  it("answers the router queue's refusal with its own message, as a rejection", async () => {
    const full = overloadRefusal('Service temporarily unavailable: the router queue is full');
    await serve(new ServiceOverloadedError('m', full));
    const res = await post({ model: 'm', stream: true });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.json()).toEqual({ message: full.message, type: 'service_unavailable', code: 503 });
    expect(metrics.answered).toHaveBeenCalledWith('m', 'completions', true, 'overload');
  });

  it('answers a drain without Retry-After and not as a rejection', async () => {
    await serve(new ShuttingDownError());
    const res = await post({ model: 'm' });
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
