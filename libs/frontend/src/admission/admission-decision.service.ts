import { Injectable } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { DEFAULT_PRIORITY, PriorityClass } from '../config/priority';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { LifecycleService } from './lifecycle.service';
import { DRAINING, OVERLOADED, Refusal } from './refusal';

/**
 * The built-in admission decision (contract §5, per priority class §8): one source of truth for
 * the early 503 hooks and the admission guard. It returns a value instead of throwing: unwinding
 * the stack costs microseconds, the decision itself a map read and a length check (each class
 * has its own free list, kept by the registry).
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
   * validation (400); while draining every request is refused. A request of class `priority` is
   * refused when every live worker of its model is busy for that class.
   */
  decide(body: unknown, priority: PriorityClass = DEFAULT_PRIORITY): Refusal | null {
    if (this.lifecycle.draining) return DRAINING;
    if (!this.enabled || typeof body !== 'object' || body === null) return null;
    const model = (body as { model?: unknown }).model;
    return typeof model === 'string' && this.registry.model(model)?.allBusyFor(priority)
      ? OVERLOADED
      : null;
  }
}
