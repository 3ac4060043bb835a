import { Module } from '@nestjs/common';
import { RequestMetricsModule } from '../request-metrics/request-metrics.module';
import { OpenAiExceptionFilter } from './openai-exception.filter';

/**
 * The HTTP face shared by every route: the catch-all error filter (registered globally by
 * FrontendModule) and, installed on Fastify by `installHttp`, hardening, request ids and the
 * access log.
 */
@Module({
  imports: [RequestMetricsModule],
  providers: [OpenAiExceptionFilter],
  exports: [OpenAiExceptionFilter],
})
export class HttpModule {}
