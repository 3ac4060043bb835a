import { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { RequestMetricsService } from './request-metrics.service';

/** For filter specs: the counters a filter calls, as mocks. */
export interface FakeRequestMetrics {
  modelLabel: jest.Mock;
  rejected: jest.Mock;
  answered: jest.Mock;
  refused: jest.Mock;
}

/** The mocks, typed as the service a filter takes. */
export type RequestMetricsMock = FakeRequestMetrics & RequestMetricsService;

export function fakeRequestMetrics(): RequestMetricsMock {
  const fake: FakeRequestMetrics = {
    modelLabel: jest.fn((m: unknown) => String(m)),
    rejected: jest.fn(),
    answered: jest.fn(),
    refused: jest.fn(),
  };
  return fake as RequestMetricsMock;
}

/** What a filter is given to write with: Nest's Fastify adapter. */
export function fastifyAdapterHost(): HttpAdapterHost {
  return { httpAdapter: new FastifyAdapter() } as unknown as HttpAdapterHost;
}

/**
 * Answers one POST to `url` by handing `error` to `filter`, as Nest does when a guard or
 * handler throws it.
 */
export async function answerThroughFilter(
  fastify: FastifyInstance,
  filter: ExceptionFilter,
  error: unknown,
  url: string,
  payload: object = { model: 'm' },
): Promise<LightMyRequestResponse> {
  fastify.post(url, (request, reply) => {
    const host = {
      getType: () => 'http',
      switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
    } as unknown as ArgumentsHost;
    filter.catch(error, host);
  });
  await fastify.ready();
  return fastify.inject({ method: 'POST', url, payload });
}
