import { Injectable, OnModuleInit } from '@nestjs/common';
import { FrontendConfig } from '../../config/frontend-config';
import { DEFAULT_PRIORITY, PRIORITY_CLASSES, PriorityClass } from '../../config/priority';
import { ServiceOverloadedError } from '../../admission/errors/service-overloaded.error';
import { OBJECTIVE_MISSED, overloadRefusal } from '../../admission/refusal';
import { EndpointLabel } from '../../metrics/metric-names';
import { TtftPredictor } from '../../ttft-prediction/ttft-predictor.service';
import { ModelNotFoundError, NoWorkersAvailableError } from '../errors/model-unavailable.error';
import { RequestMetricsService } from '../../request-metrics/request-metrics.service';
import { ThresholdsService } from '../../thresholds/thresholds.service';
import { ModelEntry, RankState, WorkerEntry } from '../../worker-monitor/worker-entry';
import { RegistryObserver, WorkerRegistry } from '../../worker-monitor/worker-registry.service';
import { ClassQueues } from './class-queues';
import { Waiter } from './router-queue';
import { lowestPrediction, Predicted } from './lowest-prediction';
import { ModelRoute, pickWorker } from './worker-picker';
import { WorkerTraffic } from './worker-traffic';

/** A worker reserved for one request; `release` must be called exactly once when it ends. */
export interface Lease {
  readonly worker: WorkerEntry;
  /** Prompt tokens ahead of the request on the worker when it was sent (its prefill load). */
  readonly tokensAhead: number;
  /** `performance.now()` when the worker was chosen: where the worker's time to first token starts. */
  readonly leasedAtMs: number;
  /**
   * With a TTFT objective for the model (contract §8): the worker's predicted time to first token
   * when it was chosen, the objective of the request's class, and whether it is a would-be
   * refusal admitted as a sample (`--ttft-slo-sample`). Null without an objective.
   */
  readonly objective: LeaseObjective | null;
  /** The worker produced the first token: its prompt is no longer waiting for prefill. */
  firstToken(): void;
  release(): void;
}

export interface LeaseObjective {
  readonly predictedMs: number;
  readonly objectiveMs: number;
  readonly sample: boolean;
}

/** A request to route: what the router and the TTFT objective read of it. */
interface Ask {
  readonly model: ModelEntry;
  readonly promptTokens: number;
  readonly maxTokens: number;
  readonly priority: PriorityClass;
  readonly endpoint: EndpointLabel;
}

const QUEUE_FULL = overloadRefusal(
  'Service temporarily unavailable: the router queue is full, please retry later',
);
const QUEUE_TIMEOUT = overloadRefusal(
  'Service temporarily unavailable: timed out waiting in the router queue, please retry later',
);

/**
 * Picks a worker that is not busy for the request's priority class (`--router-mode`) and, with
 * `--router-queue-threshold F`, holds requests in a bounded queue while every such worker
 * already has more than F × max_num_batched_tokens prompt tokens in flight from this frontend.
 * The queue serves critical requests first, then standard, then sheddable, each class in
 * arrival order; a full queue makes room for a request by refusing the newest waiter of a lower
 * class.
 */
@Injectable()
export class RouterService implements OnModuleInit, RegistryObserver {
  private readonly queues = new Map<string, ClassQueues<Lease>>();
  private readonly routes = new Map<string, ModelRoute>();
  private readonly eligible: ((w: WorkerEntry) => boolean) | null;

  constructor(
    private readonly config: FrontendConfig,
    private readonly registry: WorkerRegistry,
    private readonly metrics: RequestMetricsService,
    private readonly traffic: WorkerTraffic,
    private readonly thresholds: ThresholdsService,
    private readonly predictor: TtftPredictor,
  ) {
    const f = config.routerQueueThreshold;
    this.eligible =
      f === null
        ? null
        : (w) => {
            const budget = w.batchedTokenBudget();
            return budget === undefined || traffic.peek(w).promptTokens <= f * budget;
          };
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
  ): Lease | Promise<Lease> {
    const model = this.registry.model(modelName);
    if (!model) throw new ModelNotFoundError(modelName);
    if (model.workers.size === 0) throw new NoWorkersAvailableError(modelName);
    const ask: Ask = { model, promptTokens, maxTokens, priority, endpoint };
    // Waiters of the same or a higher class go first; lower ones may be overtaken.
    const ahead = this.queues.get(modelName)?.aheadOf(priority) ?? 0;
    const objective = this.objectiveOf(modelName, priority);
    if (objective !== null) return this.acquireWithObjective(ask, objective, ahead, cancel.signal);
    const worker = ahead > 0 ? undefined : this.pick(model, priority);
    if (worker) return this.lease(worker, promptTokens, maxTokens, null);
    // No candidate at all: every worker turned busy since the admission guard looked.
    if (this.eligible === null) throw new ServiceOverloadedError(modelName);
    return this.enqueue(ask, cancel.signal, null);
  }

  /**
   * The TTFT objective (contract §8): the free worker with the lowest predicted time to first
   * token gets the request if its prediction is within the class's objective. Otherwise, with
   * the router queue on, the request waits while some free worker could still meet its deadline
   * (arrival + objective); else it is a would-be refusal (`refuseOrAdmit`).
   */
  private acquireWithObjective(
    ask: Ask,
    objective: number,
    ahead: number,
    signal: AbortSignal,
  ): Lease | Promise<Lease> {
    const candidates = this.candidates(ask.model, ask.priority);
    const best = this.lowest(candidates, ask.promptTokens, this.eligible ?? undefined);
    if (ahead === 0 && best && best.ms <= objective) return this.leaseFor(ask, best, objective);
    if (this.eligible !== null) {
      const any = this.lowest(candidates, ask.promptTokens);
      const deadline = performance.now() + objective;
      if (!any || any.ms <= objective) return this.enqueue(ask, signal, deadline);
      return this.refuseOrAdmit(ask, best ?? any, objective);
    }
    if (!best) throw new ServiceOverloadedError(ask.model.name);
    return this.refuseOrAdmit(ask, best, objective);
  }

  /**
   * No free worker is predicted to meet the objective: refused in mode token-capacity (but for a
   * `--ttft-slo-sample` share, admitted to measure the gate), counted and admitted in shadow mode,
   * admitted with mode none. Always to the lowest prediction.
   */
  private refuseOrAdmit(ask: Ask, best: Predicted, objective: number): Lease {
    const { model, priority } = ask;
    switch (this.thresholds.admissionControl(model.name)) {
      case 'token-capacity': {
        const p = this.config.ttftSloSample;
        if (p > 0 && Math.random() < p) return this.leaseFor(ask, best, objective, true);
        throw new ServiceOverloadedError(model.name, OBJECTIVE_MISSED);
      }
      case 'shadow':
        // A request every worker is busy for was counted by the guard already.
        if (model.freeFor[priority].length > 0) {
          this.metrics.wouldReject(model.name, ask.endpoint, priority);
        }
        return this.leaseFor(ask, best, objective);
      case 'none':
        return this.leaseFor(ask, best, objective);
    }
  }

  /** The objective of class `c` for the model (its `ttft_slo_ms` × the class's factor), or null. */
  private objectiveOf(model: string, c: PriorityClass): number | null {
    return this.thresholds.byClass(model)[c].ttftSloMs;
  }

  private lowest(
    candidates: readonly WorkerEntry[],
    promptTokens: number,
    ok?: (w: WorkerEntry) => boolean,
  ): Predicted | undefined {
    return lowestPrediction(this.predictor, candidates, promptTokens, ok);
  }

  private leaseFor(ask: Ask, best: Predicted, objectiveMs: number, sample = false): Lease {
    return this.lease(best.worker, ask.promptTokens, ask.maxTokens, {
      predictedMs: best.ms,
      objectiveMs,
      sample,
    });
  }

  /** A second worker for a request whose first worker failed before answering; no queueing. */
  acquireOther(
    failed: WorkerEntry,
    promptTokens: number,
    priority: PriorityClass = DEFAULT_PRIORITY,
    maxTokens = 0,
  ): Lease | undefined {
    const model = this.registry.model(failed.model);
    if (!model) return undefined;
    const objective = this.objectiveOf(model.name, priority);
    if (objective !== null) {
      // Admitted already: no refusal now, only the lowest prediction among the others.
      const other = (w: WorkerEntry) => w !== failed && (this.eligible?.(w) ?? true);
      const best = this.lowest(this.candidates(model, priority), promptTokens, other);
      if (!best) return undefined;
      return this.lease(best.worker, promptTokens, maxTokens, {
        predictedMs: best.ms,
        objectiveMs: objective,
        sample: false,
      });
    }
    const worker = this.pick(model, priority, failed);
    return worker ? this.lease(worker, promptTokens, maxTokens, null) : undefined;
  }

  rankUpdated(worker: WorkerEntry, _rank: number, _state: RankState): void {
    if (this.queues.get(worker.model)?.size) this.drain(worker.model);
  }

  busyChanged(worker: WorkerEntry, c: PriorityClass): void {
    if (!worker.busyFor(c)) this.drain(worker.model);
  }

  workerRemoved(): void {
    // Waiters stay queued until a worker frees up or their timeout fires.
  }

  modelForgotten(name: string): void {
    this.routes.delete(name);
  }

  /**
   * A worker free for class `c`; with every worker busy for it, a model that does not enforce
   * (`shadow`, `none`) still routes, to any worker.
   */
  private pick(
    model: ModelEntry,
    c: PriorityClass,
    exclude?: WorkerEntry,
  ): WorkerEntry | undefined {
    const candidates = this.candidates(model, c);
    let route = this.routes.get(model.name);
    if (!route) {
      route = { cursor: 0, traffic: this.traffic };
      this.routes.set(model.name, route);
    }
    return pickWorker(this.config.routerMode, route, candidates, this.eligible, exclude);
  }

  /** The workers free for class `c`, or every worker when none is and the model does not enforce. */
  private candidates(model: ModelEntry, c: PriorityClass): readonly WorkerEntry[] {
    const free = model.freeFor[c];
    return free.length > 0 || this.thresholds.admissionControl(model.name) === 'token-capacity'
      ? free
      : [...model.workers.values()];
  }

  private lease(
    worker: WorkerEntry,
    promptTokens: number,
    maxTokens: number,
    objective: LeaseObjective | null,
  ): Lease {
    const tokensAhead = worker.prefillTokensAhead();
    const inflight = this.traffic.of(worker);
    inflight.requests++;
    inflight.promptTokens += promptTokens;
    this.registry.addPendingPrefill(worker, promptTokens);
    const reservation = this.registry.reserve(worker, promptTokens, maxTokens, Date.now());
    let prefilling = true;
    let released = false;
    const firstToken = (): void => {
      if (!prefilling) return;
      prefilling = false;
      this.registry.addPendingPrefill(worker, -promptTokens);
      reservation.firstToken();
    };
    return {
      worker,
      tokensAhead,
      leasedAtMs: performance.now(),
      objective,
      firstToken,
      release: () => {
        if (released) return;
        released = true;
        firstToken();
        reservation.release();
        inflight.requests--;
        inflight.promptTokens -= promptTokens;
        if (this.queues.get(worker.model)?.size) this.drain(worker.model);
      },
    };
  }

  /**
   * Holds the request until a worker is free for it. `deadlineMs` (with a TTFT objective): it is
   * served earliest deadline first within its class, and refused with the overload 503 as soon
   * as no free worker's prediction lets it make the deadline (its own timer, so without waiting
   * for traffic), instead of being served late.
   */
  private enqueue(ask: Ask, signal: AbortSignal, deadlineMs: number | null): Promise<Lease> {
    const { model, priority } = ask;
    let queue = this.queues.get(model.name);
    if (!queue) {
      queue = new ClassQueues<Lease>();
      this.queues.set(model.name, queue);
    }
    if (queue.size >= this.config.routerQueueMaxDepth) {
      // Full: a waiter of a lower class gives up its place, else the newcomer is refused.
      const evicted = queue.evictBelow(priority);
      if (!evicted) throw new ServiceOverloadedError(model.name, QUEUE_FULL);
      evicted.reject(new ServiceOverloadedError(model.name, QUEUE_FULL));
    }
    const q = queue;
    const timeoutAt = performance.now() + this.config.routerQueueTimeoutMs;
    return new Promise<Lease>((resolve, reject) => {
      const gauge = this.metrics.queued;
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        gauge.dec({ model: model.name });
      };
      const remove = q.push(priority, {
        promptTokens: ask.promptTokens,
        maxTokens: ask.maxTokens,
        ...(deadlineMs === null ? {} : { deadlineMs }),
        resolve: (lease) => {
          done();
          resolve(lease);
        },
        reject: (err) => {
          done();
          reject(err);
        },
      });
      const fail = (err: Error): void => {
        if (!remove()) return;
        done();
        reject(err);
      };
      const onAbort = (): void => fail(new Error('client went away while queued'));
      const check = (): void => {
        const now = performance.now();
        if (now >= timeoutAt) return fail(new ServiceOverloadedError(model.name, QUEUE_TIMEOUT));
        let next = timeoutAt;
        if (deadlineMs !== null) {
          const lateBy = this.lateBy(ask, deadlineMs, now);
          if (lateBy > 0) return fail(new ServiceOverloadedError(model.name, OBJECTIVE_MISSED));
          next = Math.min(next, now - lateBy);
        }
        timer = setTimeout(check, Math.max(1, next - now));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      gauge.inc({ model: model.name });
      check();
    });
  }

  /**
   * How far past its deadline a queued request's first token would come if it were sent now to
   * the free worker with the lowest prediction (> 0: it can no longer make it). With no free
   * worker nothing is predicted: only the deadline itself counts.
   */
  private lateBy(ask: Ask, deadlineMs: number, now: number): number {
    const best = this.lowest(this.candidates(ask.model, ask.priority), ask.promptTokens);
    return now + (best?.ms ?? 0) - deadlineMs;
  }

  /**
   * Hands free workers to waiters: critical ones first, each class earliest deadline first. With
   * a TTFT objective the head of a class goes to the eligible worker with the lowest prediction
   * if that makes its deadline; one that can no longer make it is refused; one that still can
   * waits (and the class behind it).
   */
  private drain(modelName: string): void {
    const queue = this.queues.get(modelName);
    const model = this.registry.model(modelName);
    if (!queue || !model) return;
    for (const c of PRIORITY_CLASSES) {
      const waiting = queue.of(c);
      while (waiting.size > 0) {
        const head = waiting.peek();
        if (!head) break;
        const served = this.serve(model, c, head);
        if (served === 'wait') break;
        waiting.shift();
        if (served === 'late') {
          head.reject(new ServiceOverloadedError(modelName, OBJECTIVE_MISSED));
        } else {
          head.resolve(served);
        }
      }
    }
  }

  private serve(model: ModelEntry, c: PriorityClass, w: Waiter<Lease>): Lease | 'wait' | 'late' {
    const maxTokens = w.maxTokens ?? 0;
    const objective = this.objectiveOf(model.name, c);
    if (w.deadlineMs === undefined || objective === null) {
      const worker = this.pick(model, c);
      return worker ? this.lease(worker, w.promptTokens, maxTokens, null) : 'wait';
    }
    const ask: Ask = {
      model,
      promptTokens: w.promptTokens,
      maxTokens,
      priority: c,
      endpoint: 'chat_completions',
    };
    const now = performance.now();
    const candidates = this.candidates(model, c);
    const best = this.lowest(candidates, w.promptTokens, this.eligible ?? undefined);
    if (best && now + best.ms <= w.deadlineMs) return this.leaseFor(ask, best, objective);
    return this.lateBy(ask, w.deadlineMs, now) > 0 ? 'late' : 'wait';
  }
}
