import { Injectable, OnModuleInit } from '@nestjs/common';
import { FrontendConfig } from '../../config/frontend-config';
import { DEFAULT_PRIORITY, PRIORITY_CLASSES, PriorityClass } from '../../config/priority';
import { ServiceOverloadedError } from '../../admission/errors/service-overloaded.error';
import { overloadRefusal } from '../../admission/refusal';
import { ModelNotFoundError, NoWorkersAvailableError } from '../errors/model-unavailable.error';
import { RequestMetricsService } from '../../request-metrics/request-metrics.service';
import { ModelEntry, RankState, WorkerEntry } from '../../worker-monitor/worker-entry';
import { RegistryObserver, WorkerRegistry } from '../../worker-monitor/worker-registry.service';
import { ClassQueues } from './class-queues';
import { ModelRoute, pickWorker } from './worker-picker';
import { WorkerTraffic } from './worker-traffic';

/** A worker reserved for one request; `release` must be called exactly once when it ends. */
export interface Lease {
  readonly worker: WorkerEntry;
  /** The worker produced the first token: its prompt is no longer waiting for prefill. */
  firstToken(): void;
  release(): void;
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
  private readonly admissionOn: boolean;

  constructor(
    private readonly config: FrontendConfig,
    private readonly registry: WorkerRegistry,
    private readonly metrics: RequestMetricsService,
    private readonly traffic: WorkerTraffic,
  ) {
    const f = config.routerQueueThreshold;
    this.admissionOn = config.admissionControl === 'token-capacity';
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
   * only if the request has to wait in the queue.
   */
  acquire(
    modelName: string,
    promptTokens: number,
    cancel: { readonly signal: AbortSignal },
    priority: PriorityClass = DEFAULT_PRIORITY,
  ): Lease | Promise<Lease> {
    const model = this.registry.model(modelName);
    if (!model) throw new ModelNotFoundError(modelName);
    if (model.workers.size === 0) throw new NoWorkersAvailableError(modelName);
    // Waiters of the same or a higher class go first; lower ones may be overtaken.
    const ahead = this.queues.get(modelName)?.aheadOf(priority) ?? 0;
    const worker = ahead > 0 ? undefined : this.pick(model, priority);
    if (worker) return this.lease(worker, promptTokens);
    // No candidate at all: every worker turned busy since the admission guard looked.
    if (this.eligible === null) throw new ServiceOverloadedError(modelName);
    return this.enqueue(model, promptTokens, cancel.signal, priority);
  }

  /** A second worker for a request whose first worker failed before answering; no queueing. */
  acquireOther(
    failed: WorkerEntry,
    promptTokens: number,
    priority: PriorityClass = DEFAULT_PRIORITY,
  ): Lease | undefined {
    const model = this.registry.model(failed.model);
    const worker = model && this.pick(model, priority, failed);
    return worker ? this.lease(worker, promptTokens) : undefined;
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
   * A worker free for class `c`; with admission control off and none free, any worker (nothing
   * is refused then).
   */
  private pick(
    model: ModelEntry,
    c: PriorityClass,
    exclude?: WorkerEntry,
  ): WorkerEntry | undefined {
    const free = model.freeFor[c];
    const candidates = free.length > 0 || this.admissionOn ? free : [...model.workers.values()];
    let route = this.routes.get(model.name);
    if (!route) {
      route = { cursor: 0, traffic: this.traffic };
      this.routes.set(model.name, route);
    }
    return pickWorker(this.config.routerMode, route, candidates, this.eligible, exclude);
  }

  private lease(worker: WorkerEntry, promptTokens: number): Lease {
    const inflight = this.traffic.of(worker);
    inflight.requests++;
    inflight.promptTokens += promptTokens;
    this.registry.addPendingPrefill(worker, promptTokens);
    let prefilling = true;
    let released = false;
    const firstToken = (): void => {
      if (!prefilling) return;
      prefilling = false;
      this.registry.addPendingPrefill(worker, -promptTokens);
    };
    return {
      worker,
      firstToken,
      release: () => {
        if (released) return;
        released = true;
        firstToken();
        inflight.requests--;
        inflight.promptTokens -= promptTokens;
        if (this.queues.get(worker.model)?.size) this.drain(worker.model);
      },
    };
  }

  private enqueue(
    model: ModelEntry,
    promptTokens: number,
    signal: AbortSignal,
    priority: PriorityClass,
  ): Promise<Lease> {
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
    return new Promise<Lease>((resolve, reject) => {
      const gauge = this.metrics.queued;
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        gauge.dec({ model: model.name });
      };
      const remove = q.push(priority, {
        promptTokens,
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
      const timer = setTimeout(
        () => fail(new ServiceOverloadedError(model.name, QUEUE_TIMEOUT)),
        this.config.routerQueueTimeoutMs,
      );
      signal.addEventListener('abort', onAbort, { once: true });
      gauge.inc({ model: model.name });
    });
  }

  /** Hands free workers to waiters: critical ones first, each class in arrival order. */
  private drain(modelName: string): void {
    const queue = this.queues.get(modelName);
    const model = this.registry.model(modelName);
    if (!queue || !model) return;
    for (const c of PRIORITY_CLASSES) {
      const waiting = queue.of(c);
      while (waiting.size > 0) {
        const worker = this.pick(model, c);
        if (!worker) break;
        const waiter = waiting.shift();
        if (!waiter) break;
        waiter.resolve(this.lease(worker, waiter.promptTokens));
      }
    }
  }
}
