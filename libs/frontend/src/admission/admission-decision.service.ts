import { Injectable } from '@nestjs/common';
import { OVERLOAD_MESSAGE } from '@sluice/contracts';
import { FrontendConfig } from '../config/frontend-config';
import { encodeErrorBody } from '../errors/error-body';
import { ErrorType } from '../metrics/metric-names';
import { WorkerRegistry } from '../monitor/worker-registry.service';
import { LifecycleService } from '../ops/lifecycle.service';

/** A refusal of the built-in check, with the contract's body encoded once. */
export interface Refusal {
  readonly status: 503;
  /** `{"message","type","code"}`, as a Buffer so Content-Type stays exactly `application/json`. */
  readonly payload: Buffer;
  readonly message: string;
  readonly errorType: ErrorType;
  /** Counted in `dynamo_frontend_model_rejection_total` and answered with `Retry-After`. */
  readonly rejection: boolean;
}

function refusal(message: string, errorType: ErrorType, rejection: boolean): Refusal {
  const payload = encodeErrorBody(message, 'service_unavailable', 503);
  return { status: 503, payload, message, errorType, rejection };
}

/** Every live worker of the model is busy (contract §3.1, §5). */
export const OVERLOADED: Refusal = refusal(OVERLOAD_MESSAGE, 'overload', true);
/** A shutdown is draining in-flight requests; new ones go to another replica. */
export const DRAINING: Refusal = refusal(
  'Server is shutting down, please retry on another replica',
  'unavailable',
  false,
);

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
