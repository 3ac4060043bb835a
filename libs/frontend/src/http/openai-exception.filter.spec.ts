import { BadRequestException, Logger, ServiceUnavailableException } from '@nestjs/common';
import Fastify, { FastifyInstance } from 'fastify';
import { NoWorkersAvailableError } from '../completions/errors/model-unavailable.error';
import {
  answerThroughFilter,
  fakeRequestMetrics,
  fastifyAdapterHost,
  RequestMetricsMock,
} from '../request-metrics/filter-spec.fixture';
import { OpenAiExceptionFilter } from './openai-exception.filter';

describe('OpenAiExceptionFilter (the catch-all)', () => {
  let fastify: FastifyInstance;
  let metrics: RequestMetricsMock;
  let sut: OpenAiExceptionFilter;

  /** Answers one request to `url` by handing `error` to the filter, as Nest would. */
  const answer = (error: unknown, url = '/v1/chat/completions') =>
    answerThroughFilter(fastify, sut, error, url);

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    fastify = Fastify();
    metrics = fakeRequestMetrics();
    sut = new OpenAiExceptionFilter(fastifyAdapterHost(), metrics);
  });
  afterEach(() => fastify.close());

  it('answers a frontend error with its status, type and message, counted under its error type', async () => {
    const res = await answer(new NoWorkersAvailableError('m'));
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers).not.toHaveProperty('retry-after');
    expect(res.headers['x-sluice-reject-reason']).toBe('no_workers');
    expect(res.body).toBe(
      `{"message":"No workers available for model 'm'","type":"service_unavailable","code":503}`,
    );
    expect(metrics.answered).toHaveBeenCalledWith('m', 'chat_completions', false, 'unavailable');
    expect(metrics.rejected).not.toHaveBeenCalled();
    expect(metrics.refused).toHaveBeenCalledWith('m', 'chat_completions', 'no_workers');
  });

  it('answers failed validation with 400, the field errors in the message and as details', async () => {
    const res = await answer(new BadRequestException(['model must be a string', 'stream bad']));
    expect(res.statusCode).toBe(400);
    expect(res.body).toBe(
      '{"message":"Invalid request: model must be a string; stream bad","type":"invalid_request_error","code":400,"details":["model must be a string","stream bad"]}',
    );
    expect(metrics.answered).toHaveBeenCalledWith('m', 'chat_completions', false, 'validation');
  });

  it("answers a failed readiness check as 'Not ready' with the health report as details", async () => {
    const report = { status: 'error', details: { bus: { status: 'down' } } };
    const res = await answer(new ServiceUnavailableException(report), '/ready');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      message: 'Not ready',
      type: 'service_unavailable',
      code: 503,
      details: report,
    });
    expect(metrics.answered).not.toHaveBeenCalled(); // not an OpenAI route
  });

  it("answers a client's fault that Nest does not map with its 4xx, and anything else with a 500", async () => {
    const aborted = Object.assign(new Error('aborted'), { statusCode: 400 });
    expect((await answer(aborted)).json()).toEqual({
      message: 'aborted',
      type: 'invalid_request_error',
      code: 400,
    });
    await fastify.close();
    fastify = Fastify();
    const res = await answer(new TypeError('boom'));
    expect(res.statusCode).toBe(500);
    expect(res.body).toBe('{"message":"Internal server error","type":"internal_error","code":500}');
    expect(metrics.answered).toHaveBeenLastCalledWith('m', 'chat_completions', false, 'internal');
  });
});
