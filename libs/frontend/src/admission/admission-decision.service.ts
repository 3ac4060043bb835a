import { Injectable } from '@nestjs/common';
import { DEFAULT_PRIORITY, PriorityClass } from '../config/priority';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { RequestTenant } from '../tenants/request-tenant';
import { TenantIdentity } from '../tenants/tenant-identity';
import { CriticalWait } from './critical-wait';
import { LifecycleService } from './lifecycle.service';
import { CLASS_REFUSED, DRAINING, OVERLOADED, Refusal } from './refusal';
import { TenantShares } from './tenant-shares';

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/**
 * What the busy rule says of a request for a model: `refuse` it (every worker busy for its
 * priority class, the model's admission mode `token-capacity`), let it `wait` in the router
 * queue (a critical one for capacity lower classes hold, `CriticalWait`; one of a tenant under
 * its weighted fair share, `TenantShares`), admit it although it
 * `would-refuse` (mode `shadow`), or `admit` it.
 */
export type Verdict = 'admit' | 'refuse' | 'wait' | 'would-refuse';

/**
 * The built-in admission decision (docs/architecture.md#busy-rule, per priority class and admission mode docs/security.md#priority-classes-who-may-set-x-sluice-priority): one
 * source of truth for the early 503 hook, the byte prescan and the admission guard. It returns a
 * value instead of throwing: unwinding the stack costs microseconds, the decision itself a map
 * read and a length check (each class has its own free list, kept by the registry), and only
 * while every worker is busy for the class a second read for the model's admission mode.
 */
@Injectable()
export class AdmissionDecision {
  constructor(
    private readonly registry: WorkerRegistry,
    private readonly thresholds: ThresholdsService,
    private readonly lifecycle: LifecycleService,
    private readonly criticalWait: CriticalWait,
    private readonly shares: TenantShares,
    private readonly tenants: TenantIdentity,
  ) {}

  /**
   * `null` admits. A body without a string `model` is admitted here, to be answered by
   * validation (400); while draining every request is refused. A request of class `priority` is
   * refused when every live worker of its model is busy for that class, unless it may wait. The
   * request's `headers` name its tenant, read only when it would be refused.
   */
  decide(
    body: unknown,
    priority: PriorityClass = DEFAULT_PRIORITY,
    headers?: Headers,
  ): Refusal | null {
    if (this.lifecycle.draining) return DRAINING;
    if (typeof body !== 'object' || body === null) return null;
    const model = (body as { model?: unknown }).model;
    if (typeof model !== 'string' || this.judge(model, priority) !== 'refuse') return null;
    if (headers !== undefined && this.underShare(model, headers)) return null;
    // A sheddable request refused while the workers are under the configured (standard)
    // thresholds is refused for its class, not because the workers are busy.
    return priority === 'sheddable' && !this.registry.model(model)?.allBusyFor('standard')
      ? CLASS_REFUSED
      : OVERLOADED;
  }

  /**
   * The busy rule for one model and priority class, in the admission mode in force for it; with
   * the request's `tenant`, one under its fair share waits instead of being refused.
   */
  judge(
    model: string,
    priority: PriorityClass = DEFAULT_PRIORITY,
    tenant?: RequestTenant,
  ): Verdict {
    if (!this.registry.model(model)?.allBusyFor(priority)) return 'admit';
    switch (this.thresholds.admissionControl(model)) {
      case 'token-capacity':
        if (priority === 'critical' && this.criticalWait.mayWait(model)) return 'wait';
        return tenant !== undefined && this.shares.underShare(model, tenant.id, tenant.weight)
          ? 'wait'
          : 'refuse';
      case 'shadow':
        return 'would-refuse';
      case 'none':
        return 'admit';
    }
  }

  /** Whether the tenant the headers name is under its fair share of the model (`TenantShares`). */
  private underShare(model: string, headers: Headers): boolean {
    const tenant = this.tenants.chargedTo(headers);
    return (
      tenant !== undefined && this.shares.underShare(model, tenant, this.tenants.weightOf(tenant))
    );
  }
}
