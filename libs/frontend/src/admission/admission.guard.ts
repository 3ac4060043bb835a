import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { isLowerPriority, PriorityClass } from '../config/priority';
import { endpointLabelFor } from '../metrics/metric-names';
import { PriorityReader, setRequestPriority } from '../priority/request-priority';
import { RequestMetricsService } from '../request-metrics/request-metrics.service';
import { TenantIdentity } from '../tenants/tenant-identity';
import { isOverload503, setTenantCharge, tenantCharge } from '../tenants/tenant-charge';
import { setRequestTenant } from '../tenants/request-tenant';
import { TenantLimits } from '../tenants/tenant-limits.service';
import { AdmissionDecision } from './admission-decision.service';
import { AdmissionPolicies, AdmissionRequest } from './admission-policy';
import { withoutStack } from '../errors/frontend.error';
import { ServiceOverloadedError } from './errors/service-overloaded.error';
import { ShuttingDownError } from './errors/shutting-down.error';
import { Refusal } from './refusal';

interface HttpRequest {
  url: string;
  ip: string;
  headers: Record<string, string | string[] | undefined>;
  body?: { model?: unknown };
}

type Closable = { once(event: 'close', listener: () => void): unknown };

/** Node's response under Fastify's reply (or the response itself under another adapter). */
const rawOf = (res: unknown): Closable => ((res as { raw?: Closable }).raw ?? res) as Closable;

/**
 * Reads the request's priority class (400 for an invalid priority header), rejects the request
 * at once when every live worker of its model is busy for that class (docs/architecture.md#busy-rule, docs/security.md#priority-classes-who-may-set-x-sluice-priority), then
 * runs the configured admission policies. Runs before validation and before any byte is
 * streamed; bodies without a model pass through, to be answered by validation (400).
 *
 * In the running server the early refusal hook (`early-refusal.hook.ts`) has already answered what the
 * built-in decision refuses; the guard asks the same decision again so that a module compiled
 * without the hook (tests, other adapters) behaves the same. It runs exactly once per admitted
 * request, so it is where a shadow model's would-be rejection is counted (docs/operations.md#rolling-out-shedding).
 */
@Injectable()
export class AdmissionGuard implements CanActivate {
  private readonly priority: PriorityReader;

  constructor(
    private readonly decision: AdmissionDecision,
    private readonly policies: AdmissionPolicies,
    config: FrontendConfig,
    private readonly metrics: RequestMetricsService,
    private readonly tenants: TenantIdentity,
    private readonly limits: TenantLimits,
  ) {
    this.priority = new PriorityReader(config.priorityHeader);
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<HttpRequest>();
    const claimed = this.priority.require(req.headers);
    const tenant = this.tenants.tenantOf(req.headers);
    const priority = this.tenants.capped(tenant, claimed);
    setRequestPriority(req, priority);
    setRequestTenant(req, { id: tenant, weight: this.tenants.weightOf(tenant) });
    const model = req.body?.model;
    const refusal = this.decision.decide(req.body, priority, req.headers);
    if (refusal?.rejection) this.limits.overloaded(tenant);
    this.enforce(refusal, model);
    if (typeof model !== 'string') return true;
    // The tenant's limits (docs/api.md#tenants), once the fleet could take the request: a 503
    // consumes nothing of them.
    const raw = rawOf(http.getResponse());
    setTenantCharge(
      req,
      this.limits.admit(tenant, req.body, (release) => raw.once('close', release)),
    );
    if (this.decision.judge(model, priority) === 'would-refuse')
      this.countShadow(req, model, priority);
    if (this.policies.list.length === 0) return true;
    return this.runPolicies(req, this.describe(req, model, priority, http.getResponse()));
  }

  private enforce(refusal: Refusal | null, model: unknown): void {
    if (refusal === null) return;
    if (refusal.rejection) {
      throw withoutStack(() => new ServiceOverloadedError(String(model), refusal));
    }
    throw new ShuttingDownError();
  }

  private countShadow(req: HttpRequest, model: string, priority: PriorityClass): void {
    const endpoint = endpointLabelFor(req.url) ?? 'chat_completions';
    this.metrics.wouldReject(model, endpoint, priority);
  }

  private async runPolicies(req: HttpRequest, request: AdmissionRequest): Promise<boolean> {
    try {
      const claimed = request.priority;
      for (const policy of this.policies.list) await policy.admit(request);
      // A policy lowered the class: the request must be free to run as that class too.
      if (request.priority !== claimed) {
        this.enforce(this.decision.decide(req.body, request.priority, req.headers), request.model);
      }
      return true;
    } catch (err) {
      // A 503 after the tenant's limits admitted it: counted `overloaded`, its charge given back.
      if (isOverload503(err)) tenantCharge(req)?.refused();
      throw err;
    }
  }

  private describe(
    req: HttpRequest,
    model: string,
    claimed: PriorityClass,
    res: unknown,
  ): AdmissionRequest {
    const auth = req.headers.authorization;
    const header = Array.isArray(auth) ? auth[0] : auth;
    const raw = ((res as { raw?: Closable }).raw ?? res) as Closable;
    let priority = claimed;
    return {
      model,
      endpoint: endpointLabelFor(req.url) ?? 'chat_completions',
      apiKey: header?.startsWith('Bearer ') ? header.slice(7).trim() : null,
      ip: req.ip,
      headers: req.headers,
      body: req.body,
      get priority() {
        return priority;
      },
      lowerPriority: (c) => {
        if (!isLowerPriority(c, priority)) return;
        priority = c;
        setRequestPriority(req, c);
      },
      onFinish: (callback) => {
        raw.once('close', callback);
      },
    };
  }
}
