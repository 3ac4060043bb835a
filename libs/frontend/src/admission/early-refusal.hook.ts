import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FrontendConfig } from '../config/frontend-config';
import { PriorityClass } from '../config/priority';
import { EndpointLabel, endpointLabelFor } from '../metrics/metric-names';
import { PriorityReader, setRequestPriority } from '../priority/request-priority';
import { RequestMetricsService } from '../request-metrics/request-metrics.service';
import { TenantIdentity } from '../tenants/tenant-identity';
import { TenantLimits } from '../tenants/tenant-limits.service';
import { AdmissionDecision } from './admission-decision.service';
import { AnswerRefusal, installPrescan, overloadPrescans, RawReplyFor } from './overload-prescan';
import { countRefusal, writeRefusal } from './refusal';
import { RetryAfter } from './retry-after';

type PreHandler = (
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
) => void;

/**
 * Answers the built-in admission refusals (every worker busy for the request's priority class,
 * or draining) from a Fastify
 * `preHandler` on the three OpenAI POST routes: after the body is parsed and depth-checked,
 * before Nest's router, guard and exception filter. The 503 is the hottest answer Sluice gives
 * and, sent from here with its pre-encoded body, it costs no exception and no Nest pipeline.
 * Headers set on every reply (security headers, `x-request-id`) and the access log still apply;
 * it is written and counted by the same functions as the 503 filter's. Admitted requests go on
 * to the admission guard, which runs the configured policies. While some model is refused, the
 * same answer comes sooner still, from the body's bytes before Fastify sees the request
 * (`overload-prescan.ts`), through `replyFor`, which gives it the same headers and access log
 * line. The hook reads the request's class (`priority/`) and keeps it beside
 * the request; a request whose priority header is invalid goes on to the guard, which answers
 * the 400.
 *
 * Must be installed before `app.init()`, which registers the routes.
 */
export function installAdmission(app: NestFastifyApplication, replyFor: RawReplyFor): void {
  const decision = app.get(AdmissionDecision);
  const metrics = app.get(RequestMetricsService);
  const config = app.get(FrontendConfig);
  const retryAfter = app.get(RetryAfter);
  const priority = new PriorityReader(config.priorityHeader);
  const tenants = app.get(TenantIdentity);
  const limits = app.get(TenantLimits);

  const answer: AnswerRefusal = (reply, refusal, endpoint, body, c: PriorityClass, headers) => {
    countRefusal(metrics, endpoint, body, refusal, c);
    // The tenant's `overloaded` count, as the guard counts its own 503s: a header read and a
    // map lookup (the key's digest is remembered), no error built.
    if (refusal.rejection) {
      const tenant = tenants.chargedTo(headers);
      if (tenant !== undefined) limits.overloaded(tenant);
    }
    writeRefusal(reply, refusal, retryAfter.of(body?.model));
  };
  const hookFor = (endpoint: EndpointLabel): PreHandler =>
    function refuseEarly(request, reply, done) {
      const c = priority.classOf(request.headers);
      // An invalid header or a key no tenant holds: the guard answers it (400, 401).
      if (c === undefined || tenants.refuses(request.headers)) return done();
      setRequestPriority(request, c);
      const body = request.body as { model?: unknown; stream?: unknown } | null | undefined;
      const refusal = decision.decide(body, c, request.headers);
      if (refusal === null) return done();
      answer(reply, refusal, endpoint, body, c, request.headers);
    };
  const { prescan, replay } = overloadPrescans(app, priority, answer, replyFor, (h) =>
    tenants.refuses(h),
  );
  installPrescan(app.getHttpServer(), prescan);

  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route: RouteOptions) => {
      const endpoint = endpointLabelFor(route.url);
      if (!endpoint || !isPost(route.method)) return;
      route.preHandler = first(hookFor(endpoint), route.preHandler);
      route.preParsing = first(replay, route.preParsing);
    });
}

function first<T>(own: T, existing: T | T[] | undefined): T | T[] {
  return existing ? [own, ...(Array.isArray(existing) ? existing : [existing])] : own;
}

function isPost(method: RouteOptions['method']): boolean {
  return Array.isArray(method) ? method.includes('POST') : method === 'POST';
}
