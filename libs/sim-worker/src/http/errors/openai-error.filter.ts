import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { OpenAiErrorBody } from '@sluice/contracts';
import { EngineClosedError, SequenceTooLargeError } from '../../engine/engine.errors';
import { OpenAiHttpError } from './openai-http.error';

/**
 * Turns every error into the OpenAI error body. Written against `HttpAdapterHost`, so it does
 * not depend on Fastify; a response that has already started (a stream) is left alone.
 */
@Catch()
export class OpenAiErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger(OpenAiErrorFilter.name);

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const { httpAdapter } = this.adapterHost;
    const response: unknown = host.switchToHttp().getResponse();
    if (httpAdapter.isHeadersSent(response)) return;
    const body = this.toBody(exception);
    httpAdapter.reply(response, body, body.code);
  }

  private toBody(exception: unknown): OpenAiErrorBody {
    if (exception instanceof OpenAiHttpError) {
      return { message: exception.message, type: exception.type, code: exception.status };
    }
    if (exception instanceof SequenceTooLargeError) {
      return { message: exception.message, type: 'invalid_request_error', code: 400 };
    }
    if (exception instanceof EngineClosedError) {
      return { message: exception.message, type: 'service_unavailable', code: 503 };
    }
    const status = statusOf(exception);
    if (status !== undefined && exception instanceof Error) {
      return { message: exception.message, type: typeFor(status), code: status };
    }
    this.logger.error(exception instanceof Error ? (exception.stack ?? exception) : exception);
    return { message: 'Internal server error', type: 'internal_error', code: 500 };
  }
}

/** Nest's HttpException, or an error Fastify raised (e.g. a malformed JSON body). */
function statusOf(exception: unknown): number | undefined {
  if (exception instanceof HttpException) return exception.getStatus();
  const status = (exception as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : undefined;
}

function typeFor(status: number): string {
  if (status === 404) return 'not_found';
  if (status === 503) return 'service_unavailable';
  return status < 500 ? 'invalid_request_error' : 'internal_error';
}
