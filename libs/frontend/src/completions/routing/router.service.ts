import { Injectable, OnModuleInit } from '@nestjs/common';
import { AdmissionDecision } from '../../admission/admission-decision.service';
import { CriticalWait } from '../../admission/critical-wait';
import { TenantShares } from '../../admission/tenant-shares';
import { FrontendConfig } from '../../config/frontend-config';
import { RequestTenant, UNSEEN_TENANT } from '../../tenants/request-tenant';
import { classAbove, DEFAULT_PRIORITY, PriorityClass } from '../../config/priority';
import { ServiceOverloadedError } from '../../admission/errors/service-overloaded.error';
import { EndpointLabel } from '../../metrics/metric-names';
import { ModelNotFoundError, NoWorkersAvailableError } from '../errors/model-unavailable.error';
import { RequestMetricsService } from '../../request-metrics/request-metrics.service';
import { OutlierEjection } from '../../worker-monitor/outlier-ejection';
import { ModelEntry, RankState, WorkerEntry } from '../../worker-monitor/worker-entry';
import { RegistryObserver, WorkerRegistry } from '../../worker-monitor/worker-registry.service';
import { Ask } from './ask';
import { Admit, ObjectiveGate } from './objective-gate';
import { Waiter } from './router-queue';
import { WaitingRoom } from './waiting-room';
import { WorkerChoice } from './worker-choice';
import { Lease, WorkerLeases } from './worker-leases';
import { WorkerTraffic } from './worker-traffic';

export type { Lease, LeaseObjective } from './worker-leases';

/**
 * Picks a worker that is not busy for the request's priority class (`--router-mode`, or the
 * lowest predicted TTFT under a TTFT objective: `ObjectiveGate`) and, with
 * `--router-queue-threshold F`, holds requests in a bounded queue (`WaitingRoom`) while every
 * such worker already has more than F × max_num_batched_tokens prompt tokens in flight from this
 * frontend. A critical request that finds every worker busy for it waits in the same queue while
 * lower classes hold capacity (`CriticalWait`). A request of a tenant under its weighted fair
 * share of the model (`TenantShares`, which counts every request sent or queued here) is sent to
 * a worker not busy for the class above its own, and waits in the queue only when there is none
 * (docs/decisions/0230-fair-share-headroom.md). Every lease ended or worker freed up hands the
 * room on to the queue, critical waiters first.
 */
@Injectable()
export class RouterService implements OnModuleInit, RegistryObserver {
  private readonly leases: WorkerLeases;
  private readonly room: WaitingRoom<Lease>;

  constructor(
    config: FrontendConfig,
    private readonly registry: WorkerRegistry,
    metrics: RequestMetricsService,
    traffic: WorkerTraffic,
    private readonly choice: WorkerChoice,
    private readonly gate: ObjectiveGate,
    private readonly criticalWait: CriticalWait,
    private readonly decision: AdmissionDecision,
    private readonly shares: TenantShares,
    ejection: OutlierEjection,
  ) {
    const released = (w: WorkerEntry): void => this.drainIfWaiting(w.model);
    this.leases = new WorkerLeases(registry, traffic, released, criticalWait, ejection, shares);
    this.room = new WaitingRoom<Lease>(config, registry, metrics, {
      serve: (model, c, waiter) => this.serve(model, c, waiter),
      lateBy: (ask, deadlineMs, now) => this.gate.lateBy(ask, deadlineMs, now),
    });
  }

  onModuleInit(): void {
    this.registry.observe(this);
  }

  /**
   * A worker for a request of class `priority`, now or (queued) later. `cancel.signal` is read
   * only if the request has to wait in the queue. `maxTokens` (the request's output limit, 0
   * when it sets none) sizes the KV blocks reserved on the worker.
   */
  acquire(
    modelName: string,
    promptTokens: number,
    cancel: { readonly signal: AbortSignal },
    priority: PriorityClass = DEFAULT_PRIORITY,
    maxTokens = 0,
    endpoint: EndpointLabel = 'chat_completions',
    tenant: RequestTenant = UNSEEN_TENANT,
  ): Lease | Promise<Lease> {
    const model = this.registry.model(modelName);
    if (!model) throw new ModelNotFoundError(modelName);
    // Every worker gone, or ejected from routing (OutlierEjection): none to send it to.
    if (model.routable === 0) throw new NoWorkersAvailableError(modelName);
    const ask: Ask = { model, promptTokens, maxTokens, priority, endpoint, tenant };
    // Waiters of the same or a higher class go first; lower ones may be overtaken.
    const ahead = this.room.aheadOf(modelName, priority);
    const objective = this.gate.objectiveOf(modelName, priority);
    if (this.decision.judge(modelName, priority, tenant) === 'wait') {
      const lifted = objective === null && ahead === 0 ? this.liftedPick(model, priority) : null;
      if (lifted) return this.leases.lease(lifted, priority, promptTokens, maxTokens, null, tenant);
      const deadlineMs = objective === null ? null : performance.now() + objective;
      return this.enqueue(ask, cancel.signal, deadlineMs);
    }
    if (objective !== null) {
      const verdict = this.gate.atArrival(ask, objective, ahead);
      if ('deadlineMs' in verdict) return this.enqueue(ask, cancel.signal, verdict.deadlineMs);
      return this.admit(ask, verdict);
    }
    const worker = ahead > 0 ? undefined : this.choice.pick(model, priority);
    if (worker) {
      return this.leases.lease(worker, priority, promptTokens, maxTokens, null, tenant);
    }
    // Without a router queue threshold, none for it: every worker turned busy since the admission
    // guard looked, or others wait ahead of it; a tenant under its share waits behind them.
    if (this.choice.eligible === null && !(ahead > 0 && this.underShare(model, tenant))) {
      throw new ServiceOverloadedError(modelName);
    }
    return this.enqueue(ask, cancel.signal, null);
  }

  /**
   * Another worker for a request whose workers so far (`tried`, never empty) failed before
   * answering: free for its class and not tried yet; no queueing. Its new lease counts it for
   * `tenant`'s share as the failed one did.
   */
  acquireOther(
    tried: ReadonlySet<WorkerEntry>,
    promptTokens: number,
    priority: PriorityClass = DEFAULT_PRIORITY,
    maxTokens = 0,
    tenant?: RequestTenant,
  ): Lease | undefined {
    const first = tried.values().next().value as WorkerEntry;
    const model = this.registry.model(first.model);
    if (!model) return undefined;
    const objective = this.gate.objectiveOf(model.name, priority);
    if (objective !== null) {
      const ask: Ask = {
        ...{ model, promptTokens, maxTokens, priority, endpoint: 'chat_completions' },
        tenant,
      };
      const verdict = this.gate.forRetry(ask, tried, objective);
      return verdict && this.admit(ask, verdict);
    }
    const worker = this.choice.pick(model, priority, tried);
    return worker
      ? this.leases.lease(worker, priority, promptTokens, maxTokens, null, tenant)
      : undefined;
  }

  rankUpdated(worker: WorkerEntry, _rank: number, _state: RankState): void {
    this.drainIfWaiting(worker.model);
  }

  busyChanged(worker: WorkerEntry, c: PriorityClass): void {
    if (!worker.busyFor(c)) this.room.drain(worker.model);
  }

  /** A worker back in routing (a probe due) may take a waiter. */
  routingChanged(worker: WorkerEntry): void {
    if (worker.inRouting) this.drainIfWaiting(worker.model);
  }

  workerRemoved(): void {
    // Waiters stay queued until a worker frees up or their timeout fires.
  }

  modelForgotten(name: string): void {
    this.choice.forget(name);
  }

  private drainIfWaiting(model: string): void {
    if (this.room.has(model)) this.room.drain(model);
  }

  /** Whether `tenant` is under its share of the model, `self` of its requests left out. */
  private underShare(model: ModelEntry, tenant: RequestTenant | undefined, self = 0): boolean {
    return (
      tenant !== undefined && this.shares.underShare(model.name, tenant.id, tenant.weight, self)
    );
  }

  /**
   * For a request that may wait (a tenant under its share, or a critical one): a worker not busy
   * for the class above its own, whose headroom it takes rather than wait (decision 0230). None
   * for a critical request: there is no class above it.
   */
  private liftedPick(model: ModelEntry, c: PriorityClass): WorkerEntry | null {
    const above = classAbove(c);
    return (above && this.choice.pick(model, above)) ?? null;
  }

  /**
   * Queues the request; it counts for its tenant's share (`TenantShares`) until it leaves the
   * queue (served, its lease counts it), and a critical waiter for `CriticalWait`.
   */
  private enqueue(ask: Ask, signal: AbortSignal, deadlineMs: number | null): Promise<Lease> {
    const waiting = this.room.enqueue(ask, signal, deadlineMs);
    const { model, tenant } = ask;
    if (tenant) {
      this.shares.started(model.name, tenant.id, tenant.weight);
      const ended = (): void => this.shares.ended(model.name, tenant.id);
      waiting.then(ended, ended);
    }
    if (ask.priority !== 'critical') return waiting;
    const name = ask.model.name;
    this.criticalWait.queued(name);
    const left = (): void => this.criticalWait.left(name);
    waiting.then(left, left);
    return waiting;
  }

  private admit(ask: Ask, { best, objectiveMs, sample }: Admit): Lease {
    return this.leases.lease(
      best.worker,
      ask.priority,
      ask.promptTokens,
      ask.maxTokens,
      { predictedMs: best.ms, objectiveMs, sample },
      ask.tenant,
    );
  }

  /** The head waiter of class `c`: to a worker now, or it waits, or it is too late (objective). */
  private serve(model: ModelEntry, c: PriorityClass, w: Waiter<Lease>): Lease | 'wait' | 'late' {
    const maxTokens = w.maxTokens ?? 0;
    const objective = this.gate.objectiveOf(model.name, c);
    // Its lease counts it for its tenant's share from here on (its wait counted it until now).
    const tenant = w.tenant === undefined ? undefined : { id: w.tenant, weight: w.weight ?? 1 };
    if (w.deadlineMs === undefined || objective === null) {
      // A waiter of a tenant still under its share (itself left out) may take the headroom of
      // the class above.
      const worker =
        this.choice.pick(model, c) ??
        (this.underShare(model, tenant, 1) ? this.liftedPick(model, c) : null);
      return worker
        ? this.leases.lease(worker, c, w.promptTokens, maxTokens, null, tenant)
        : 'wait';
    }
    const ask: Ask = {
      model,
      promptTokens: w.promptTokens,
      maxTokens,
      priority: c,
      endpoint: 'chat_completions',
      tenant,
    };
    const verdict = this.gate.forWaiter(ask, w.deadlineMs, objective);
    return typeof verdict === 'string' ? verdict : this.admit(ask, verdict);
  }
}
