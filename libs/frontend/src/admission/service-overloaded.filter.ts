import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { endpointLabelFor } from '../metrics/metric-names';
import { requestPriority } from '../priority/request-priority';
import { RequestMetricsService } from '../request-metrics/request-metrics.service';
import { ServiceOverloadedError } from './errors/service-overloaded.error';
import { ShuttingDownError } from './errors/shutting-down.error';
import { countRefusal, RefusalReply, writeRefusal } from './refusal';
import { RetryAfter } from './retry-after';

interface HttpRequest {
  url: string;
  body?: { model?: unknown; stream?: unknown };
}

/**
 * The 503s of admission thrown as errors (by the admission guard where the early hook did not
 * answer, by the router queue) answered as docs/api.md#errors says, by the same writer and counter as
 * the early hook. Written against HttpAdapterHost, so it does not depend on Fastify.
 */
@Catch(ServiceOverloadedError, ShuttingDownError)
export class ServiceOverloadedFilter implements ExceptionFilter {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly metrics: RequestMetricsService,
    private readonly retryAfter: RetryAfter,
  ) {}

  catch(exception: ServiceOverloadedError | ShuttingDownError, host: ArgumentsHost): void {
    if (host.getType() !== 'http') return;
    const http = host.switchToHttp();
    const req = http.getRequest<HttpRequest>();
    const res: unknown = http.getResponse();
    const endpoint = endpointLabelFor(req.url);
    if (endpoint) {
      countRefusal(this.metrics, endpoint, req.body, exception.refusal, requestPriority(req));
    }
    const adapter = this.adapterHost.httpAdapter;
    const reply: RefusalReply = {
      code: (status) => void adapter.status(res, status),
      header: (name, value) => void adapter.setHeader(res, name, value),
      send: (payload) => void adapter.reply(res, payload),
    };
    const model = exception instanceof ServiceOverloadedError ? exception.model : undefined;
    writeRefusal(reply, exception.refusal, this.retryAfter.of(model));
  }
}
