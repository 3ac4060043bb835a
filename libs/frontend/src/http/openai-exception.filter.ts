import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { OpenAiErrorBody } from '@sluice/contracts';
import {
  endpointLabelFor,
  ErrorType,
  REJECT_REASON_HEADER,
  RefusalReason,
} from '../metrics/metric-names';
import { RequestMetricsService } from '../request-metrics/request-metrics.service';
import { encodeOpenAiError, errorBody } from '../errors/error-body';
import { FrontendError } from '../errors/frontend.error';

interface Answer {
  body: OpenAiErrorBody;
  errorType: ErrorType;
  rejectReason?: RefusalReason;
}

const HTTP_TYPES: Record<number, { type: string; errorType: ErrorType }> = {
  400: { type: 'invalid_request_error', errorType: 'validation' },
  404: { type: 'not_found', errorType: 'not_found' },
  413: { type: 'invalid_request_error', errorType: 'validation' },
  415: { type: 'invalid_request_error', errorType: 'validation' },
};

/**
 * A Node or Fastify error that Nest does not map but that Fastify marked as the client's fault,
 * e.g. `aborted` when a client hangs up in the middle of its body: not a 500, nothing to log.
 */
function clientErrorStatus(exception: unknown): number | undefined {
  if (!(exception instanceof Error)) return undefined;
  const status = (exception as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

/**
 * Turns every error into the contract's JSON body (docs/api.md#errors) and counts it. Written against
 * HttpAdapterHost so it does not depend on Fastify. The admission's 503s have their own filter
 * (`ServiceOverloadedFilter`), which Nest tries first.
 */
@Catch()
export class OpenAiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly metrics: RequestMetricsService,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') return;
    const http = host.switchToHttp();
    const req = http.getRequest<{ url: string; body?: { model?: unknown; stream?: unknown } }>();
    const res: unknown = http.getResponse();
    const adapter = this.adapterHost.httpAdapter;
    if (exception instanceof FrontendError && exception.openAiCode !== undefined) {
      return this.answerOpenAi(exception, req, res);
    }
    const answer = this.toAnswer(exception);
    this.count(req, answer);
    // A Buffer keeps the Content-Type exactly `application/json` (Fastify appends a charset to
    // strings and objects); docs/api.md#errors spells the header out.
    adapter.setHeader(res, 'Content-Type', 'application/json');
    if (answer.rejectReason) adapter.setHeader(res, REJECT_REASON_HEADER, answer.rejectReason);
    adapter.reply(res, Buffer.from(JSON.stringify(answer.body)), answer.body.code);
  }

  /** The tenant answers, in OpenAI's own shape (docs/api.md#tenants). */
  private answerOpenAi(
    exception: FrontendError,
    req: { url: string; body?: { model?: unknown; stream?: unknown } },
    res: unknown,
  ): void {
    const adapter = this.adapterHost.httpAdapter;
    this.count(req, {
      body: errorBody(exception.message, exception.type, exception.status),
      errorType: exception.errorType,
      rejectReason: exception.rejectReason,
    });
    adapter.setHeader(res, 'Content-Type', 'application/json');
    for (const [name, value] of Object.entries(exception.headers ?? {})) {
      adapter.setHeader(res, name, value);
    }
    if (exception.rejectReason)
      adapter.setHeader(res, REJECT_REASON_HEADER, exception.rejectReason);
    const body = encodeOpenAiError(exception.message, exception.type, exception.openAiCode ?? '');
    adapter.reply(res, body, exception.status);
  }

  private toAnswer(exception: unknown): Answer {
    if (exception instanceof FrontendError) {
      const body = errorBody(exception.message, exception.type, exception.status);
      return { body, errorType: exception.errorType, rejectReason: exception.rejectReason };
    }
    if (exception instanceof HttpException) return this.fromHttpException(exception);
    const status = clientErrorStatus(exception);
    if (status !== undefined) {
      return this.fromHttpException(new HttpException((exception as Error).message, status));
    }
    this.logger.error(
      exception instanceof Error ? (exception.stack ?? exception.message) : exception,
    );
    return {
      body: errorBody('Internal server error', 'internal_error', 500),
      errorType: 'internal',
    };
  }

  private fromHttpException(exception: HttpException): Answer {
    const status = exception.getStatus();
    const known = HTTP_TYPES[status] ?? {
      type: status >= 500 ? 'internal_error' : 'invalid_request_error',
      errorType: status >= 500 ? 'internal' : 'validation',
    };
    const response = exception.getResponse();
    const fieldErrors =
      typeof response === 'object' &&
      response !== null &&
      Array.isArray((response as { message?: unknown }).message)
        ? (response as { message: string[] }).message
        : undefined;
    // A health check's failure carries its per-indicator report: keep it as `details`.
    const report =
      typeof response === 'object' && response !== null && 'details' in response
        ? response
        : undefined;
    const body = errorBody(
      fieldErrors
        ? `Invalid request: ${fieldErrors.join('; ')}`
        : report
          ? 'Not ready'
          : exception.message,
      report ? 'service_unavailable' : known.type,
      status,
      report ?? fieldErrors,
    );
    return { body, errorType: known.errorType };
  }

  private count(
    req: { url: string; body?: { model?: unknown; stream?: unknown } },
    answer: Answer,
  ): void {
    const endpoint = endpointLabelFor(req.url);
    if (!endpoint) return;
    const model = this.metrics.modelLabel(req.body?.model);
    this.metrics.answered(model, endpoint, req.body?.stream === true, answer.errorType);
    if (answer.rejectReason) this.metrics.refused(model, endpoint, answer.rejectReason);
  }
}
