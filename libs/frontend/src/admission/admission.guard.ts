import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { WorkerRegistry } from '../monitor/worker-registry.service';
import { ServiceOverloadedError } from './errors';

/**
 * Rejects a request at once when every live worker of its model is busy (contract §5). Runs
 * before validation and before any byte is streamed; unknown models and bodies without a model
 * pass through, to be answered by validation (400) or the router (404 / 503).
 */
@Injectable()
export class AdmissionGuard implements CanActivate {
  private readonly enabled: boolean;

  constructor(
    config: FrontendConfig,
    private readonly registry: WorkerRegistry,
  ) {
    this.enabled = config.admissionControl === 'token-capacity';
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.enabled) return true;
    const body = context.switchToHttp().getRequest<{ body?: { model?: unknown } }>().body;
    const model = body?.model;
    if (typeof model !== 'string') return true;
    if (this.registry.model(model)?.allBusy) throw new ServiceOverloadedError(model);
    return true;
  }
}
