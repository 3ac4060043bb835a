import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { endpointLabelFor } from '../metrics/request-metrics.service';
import { WorkerRegistry } from '../monitor/worker-registry.service';
import { LifecycleService } from '../ops/lifecycle.service';
import { AdmissionPolicies, AdmissionRequest } from './admission-policy';
import { ServiceOverloadedError, ShuttingDownError, withoutStack } from './errors';

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
 */
@Injectable()
export class AdmissionGuard implements CanActivate {
  private readonly enabled: boolean;

  constructor(
    config: FrontendConfig,
    private readonly registry: WorkerRegistry,
    private readonly lifecycle: LifecycleService,
    private readonly policies: AdmissionPolicies,
  ) {
    this.enabled = config.admissionControl === 'token-capacity';
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (this.lifecycle.draining) throw new ShuttingDownError();
    const http = context.switchToHttp();
    const req = http.getRequest<HttpRequest>();
    const model = req.body?.model;
    if (typeof model !== 'string') return true;
    if (this.enabled && this.registry.model(model)?.allBusy) {
      throw withoutStack(() => new ServiceOverloadedError(model));
    }
    if (this.policies.list.length === 0) return true;
    return this.runPolicies(this.describe(req, model, http.getResponse()));
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
