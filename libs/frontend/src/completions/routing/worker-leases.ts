import { CriticalWait } from '../../admission/critical-wait';
import { TenantShares } from '../../admission/tenant-shares';
import { RequestTenant } from '../../tenants/request-tenant';
import { PriorityClass } from '../../config/priority';
import { OutlierEjection } from '../../worker-monitor/outlier-ejection';
import { WorkerEntry } from '../../worker-monitor/worker-entry';
import { WorkerRegistry } from '../../worker-monitor/worker-registry.service';
import { WorkerTraffic } from './worker-traffic';

/** A worker reserved for one request; `release` must be called exactly once when it ends. */
export interface Lease {
  readonly worker: WorkerEntry;
  /** Prompt tokens ahead of the request on the worker when it was sent (its prefill load). */
  readonly tokensAhead: number;
  /** The worker's KV usage (0..1) when it was sent: the TTFT model's other regressor. */
  readonly kvUsage: number;
  /** `performance.now()` when the worker was chosen: where the worker's time to first token starts. */
  readonly leasedAtMs: number;
  /**
   * With a TTFT objective for the model (docs/operations.md#ttft-objective): the worker's predicted time to first token
   * when it was chosen, the objective of the request's class, and whether it is a would-be
   * refusal admitted as a sample (`--ttft-slo-sample`). Null without an objective.
   */
  readonly objective: LeaseObjective | null;
  /**
   * The worker took the request: a streamed request's status line came, or a unary request is
   * being sent (its answer comes whole, at the end). Load reports measured from then on are
   * trusted to hold it; before, it counts on top of them (WorkerRegistry.reserve).
   */
  accepted(): void;
  /** The worker produced the first token: its prompt is no longer waiting for prefill. */
  firstToken(): void;
  release(): void;
}

export interface LeaseObjective {
  readonly predictedMs: number;
  readonly objectiveMs: number;
  readonly sample: boolean;
}

/**
 * Hands out leases on workers and keeps what each one holds counted while it lasts: the
 * frontend's own in-flight requests, those of them waiting for their first token, and their prompt
 * tokens (`WorkerTraffic`), the prompt tokens waiting for prefill and the KV blocks reserved between
 * load reports (`WorkerRegistry`), the model's lower-class requests in flight (`CriticalWait`),
 * and each tenant's requests in flight on the model (`TenantShares`).
 * `released` hears of every lease that ends, so that the router queue can hand the room on. A
 * lease on a worker back from outlier ejection is its probe (`OutlierEjection`).
 */
export class WorkerLeases {
  constructor(
    private readonly registry: WorkerRegistry,
    private readonly traffic: WorkerTraffic,
    private readonly released: (worker: WorkerEntry) => void,
    private readonly criticalWait: CriticalWait,
    private readonly ejection: OutlierEjection,
    private readonly shares: TenantShares,
  ) {}

  /** A lease on `worker` for a request of class `c` (of `tenant`, if it counts for its share). */
  lease(
    worker: WorkerEntry,
    c: PriorityClass,
    promptTokens: number,
    maxTokens: number,
    objective: LeaseObjective | null,
    tenant?: RequestTenant,
  ): Lease {
    const tokensAhead = worker.prefillTokensAhead();
    const kvUsage = worker.judgedKvUsage();
    const inflight = this.traffic.of(worker);
    inflight.requests++;
    inflight.prefilling++;
    inflight.promptTokens += promptTokens;
    this.registry.addPendingPrefill(worker, promptTokens);
    const reservation = this.registry.reserve(worker, promptTokens, maxTokens, Date.now(), true);
    this.criticalWait.started(worker.model, c);
    if (tenant) this.shares.started(worker.model, tenant.id, tenant.weight);
    const probe = this.ejection.leased(worker);
    let prefilling = true;
    let released = false;
    const firstToken = (): void => {
      if (!prefilling) return;
      prefilling = false;
      inflight.prefilling--;
      this.registry.addPendingPrefill(worker, -promptTokens);
      reservation.firstToken();
    };
    return {
      worker,
      tokensAhead,
      kvUsage,
      leasedAtMs: performance.now(),
      objective,
      accepted: () => reservation.accepted(),
      firstToken,
      release: () => {
        if (released) return;
        released = true;
        this.criticalWait.ended(worker.model, c);
        if (tenant) this.shares.ended(worker.model, tenant.id);
        firstToken();
        reservation.release();
        inflight.requests--;
        inflight.promptTokens -= promptTokens;
        if (probe) this.ejection.probeEnded(worker);
        this.released(worker);
      },
    };
  }
}
