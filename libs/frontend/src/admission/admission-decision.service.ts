import { Injectable } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { LifecycleService } from './lifecycle.service';
import { DRAINING, OVERLOADED, Refusal } from './refusal';

/**
 * The built-in admission decision (contract §5): one source of truth for the early 503 hook and
 * the admission guard. It returns a value instead of throwing: unwinding the stack costs
 * microseconds, the decision itself a map read.
 */
@Injectable()
export class AdmissionDecision {
  private readonly enabled: boolean;

  constructor(
    config: FrontendConfig,
    private readonly registry: WorkerRegistry,
    private readonly lifecycle: LifecycleService,
  ) {
    this.enabled = config.admissionControl === 'token-capacity';
  }

  /**
   * `null` admits. A body without a string `model` is admitted here, to be answered by
   * validation (400); while draining every request is refused.
   */
  decide(body: unknown): Refusal | null {
    if (this.lifecycle.draining) return DRAINING;
    if (!this.enabled || typeof body !== 'object' || body === null) return null;
    const model = (body as { model?: unknown }).model;
    return typeof model === 'string' && this.registry.model(model)?.allBusy ? OVERLOADED : null;
  }
}
