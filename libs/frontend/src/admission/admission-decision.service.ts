import { Injectable } from '@nestjs/common';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { LifecycleService } from './lifecycle.service';
import { DRAINING, OVERLOADED, Refusal } from './refusal';

/**
 * What the busy rule says of a request for a model: `refuse` it (every worker busy, the model's
 * admission mode `token-capacity`), admit it although it `would-refuse` (mode `shadow`), or
 * `admit` it.
 */
export type Verdict = 'admit' | 'refuse' | 'would-refuse';

/**
 * The built-in admission decision (contract §5, §8): one source of truth for the early 503 hook,
 * the byte prescan and the admission guard. It returns a value instead of throwing: unwinding
 * the stack costs microseconds, the decision itself a map read (and, only while every worker of
 * the model is busy, a second one for the model's admission mode).
 */
@Injectable()
export class AdmissionDecision {
  constructor(
    private readonly registry: WorkerRegistry,
    private readonly thresholds: ThresholdsService,
    private readonly lifecycle: LifecycleService,
  ) {}

  /**
   * `null` admits. A body without a string `model` is admitted here, to be answered by
   * validation (400); while draining every request is refused.
   */
  decide(body: unknown): Refusal | null {
    if (this.lifecycle.draining) return DRAINING;
    if (typeof body !== 'object' || body === null) return null;
    const model = (body as { model?: unknown }).model;
    return typeof model === 'string' && this.judge(model) === 'refuse' ? OVERLOADED : null;
  }

  /** The busy rule for one model, in the admission mode in force for it. */
  judge(model: string): Verdict {
    if (!this.registry.model(model)?.allBusy) return 'admit';
    switch (this.thresholds.admissionControl(model)) {
      case 'token-capacity':
        return 'refuse';
      case 'shadow':
        return 'would-refuse';
      case 'none':
        return 'admit';
    }
  }
}
