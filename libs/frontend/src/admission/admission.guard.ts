import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { endpointLabelFor } from '../metrics/metric-names';
import { RequestMetricsService } from '../request-metrics/request-metrics.service';
import { AdmissionDecision } from './admission-decision.service';
import { AdmissionPolicies, AdmissionRequest } from './admission-policy';
import { withoutStack } from '../errors/frontend.error';
import { ServiceOverloadedError } from './errors/service-overloaded.error';
import { ShuttingDownError } from './errors/shutting-down.error';
import { OVERLOADED } from './refusal';
import { priorityOf } from './request-priority';

interface HttpRequest {
  url: string;
  ip: string;
  headers: Record<string, string | string[] | undefined>;
  body?: { model?: unknown };
}

type Closable = { once(event: 'close', listener: () => void): unknown };

/**
 * Rejects a request at once when every live worker of its model is busy (contract §5), then
 * runs the configured admission policies. Runs before validation and before any byte is
 * streamed; bodies without a model pass through, to be answered by validation (400).
 *
 * In the running server the early refusal hook (`early-refusal.hook.ts`) has already answered what the
 * built-in decision refuses; the guard asks the same decision again so that a module compiled
 * without the hook (tests, other adapters) behaves the same. It runs exactly once per admitted
 * request, so it is where a shadow model's would-be rejection is counted (contract §8).
 */
@Injectable()
export class AdmissionGuard implements CanActivate {
  constructor(
    private readonly decision: AdmissionDecision,
    private readonly policies: AdmissionPolicies,
    private readonly metrics: RequestMetricsService,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<HttpRequest>();
    const refusal = this.decision.decide(req.body);
    const model = req.body?.model;
    if (refusal === OVERLOADED) throw withoutStack(() => new ServiceOverloadedError(String(model)));
    if (refusal !== null) throw new ShuttingDownError();
    if (typeof model !== 'string') return true;
    if (this.decision.judge(model) === 'would-refuse') this.countShadow(req, model);
    if (this.policies.list.length === 0) return true;
    return this.runPolicies(this.describe(req, model, http.getResponse()));
  }

  private countShadow(req: HttpRequest, model: string): void {
    const endpoint = endpointLabelFor(req.url) ?? 'chat_completions';
    this.metrics.wouldReject(model, endpoint, priorityOf(req.headers));
  }

  private async runPolicies(request: AdmissionRequest): Promise<boolean> {
    for (const policy of this.policies.list) await policy.admit(request);
    return true;
  }

  private describe(req: HttpRequest, model: string, res: unknown): AdmissionRequest {
    const auth = req.headers.authorization;
    const header = Array.isArray(auth) ? auth[0] : auth;
    const raw = ((res as { raw?: Closable }).raw ?? res) as Closable;
    return {
      model,
      endpoint: endpointLabelFor(req.url) ?? 'chat_completions',
      apiKey: header?.startsWith('Bearer ') ? header.slice(7).trim() : null,
      ip: req.ip,
      headers: req.headers,
      body: req.body,
      onFinish: (callback) => {
        raw.once('close', callback);
      },
    };
  }
}
