import { FrontendConfig } from '../../config/frontend-config';
import { PRIORITY_CLASSES, PriorityClass } from '../../config/priority';
import { ServiceOverloadedError } from '../../admission/errors/service-overloaded.error';
import { OBJECTIVE_MISSED, overloadRefusal } from '../../admission/refusal';
import { RequestMetricsService } from '../../request-metrics/request-metrics.service';
import { WorkerRegistry } from '../../worker-monitor/worker-registry.service';
import { ModelEntry } from '../../worker-monitor/worker-entry';
import { RequestTenant, UNSEEN_TENANT } from '../../tenants/request-tenant';
import { Ask } from './ask';
import { ClassQueues } from './class-queues';
import { Waiter } from './router-queue';

const QUEUE_FULL_MESSAGE =
  'Service temporarily unavailable: the router queue is full, please retry later';
const QUEUE_FULL = overloadRefusal(QUEUE_FULL_MESSAGE, 'all_workers_busy');
/** A waiter of a lower class that a newcomer of a higher class pushed out of a full queue. */
const QUEUE_EVICTED = overloadRefusal(QUEUE_FULL_MESSAGE, 'priority');
const QUEUE_TIMEOUT = overloadRefusal(
  'Service temporarily unavailable: timed out waiting in the router queue, please retry later',
  'queue_timeout',
);

/** What the waiting room asks of the router. */
export interface WaitingRoomHost<T> {
  /** Serves a waiter of class `c` now, or says it must wait or can no longer make its deadline. */
  serve(model: ModelEntry, c: PriorityClass, waiter: Waiter<T>): T | 'wait' | 'late';
  /** How far past `deadlineMs` its first token would come if it were sent now (> 0: too late). */
  lateBy(ask: Ask, deadlineMs: number, now: number): number;
}

/**
 * The router queue (`--router-queue-threshold`): per model, bounded by `--router-queue-max-depth`,
 * served critical first, then standard, then sheddable, each class shared between tenants by
 * weight (`FairQueue`) and each tenant's waiters earliest deadline first and in arrival order
 * without one. A full queue makes room by refusing the newest waiter of a lower class, else of
 * the tenant furthest over its share. Each waiter has one timer: for `--router-queue-timeout-ms`,
 * and with a TTFT objective for the moment its deadline can no longer be met.
 */
export class WaitingRoom<T> {
  private readonly queues = new Map<string, ClassQueues<T>>();
  /** Models to drain; a drain asked for while one runs is done by the running one. */
  private readonly toDrain = new Set<string>();
  private draining = false;

  constructor(
    private readonly config: FrontendConfig,
    private readonly registry: WorkerRegistry,
    private readonly metrics: RequestMetricsService,
    private readonly host: WaitingRoomHost<T>,
  ) {}

  /** Waiters of the model that a newcomer of class `c` must not overtake. */
  aheadOf(model: string, c: PriorityClass): number {
    return this.queues.get(model)?.aheadOf(c) ?? 0;
  }

  /** Whether anyone waits for the model. */
  has(model: string): boolean {
    return (this.queues.get(model)?.size ?? 0) > 0;
  }

  /**
   * Holds the request until `drain` serves it. `deadlineMs` (with a TTFT objective): it is
   * served earliest deadline first within its class, and refused with the overload 503 as soon
   * as no free worker's prediction lets it make the deadline (its own timer, so without waiting
   * for traffic), instead of being served late.
   */
  enqueue(ask: Ask, signal: AbortSignal, deadlineMs: number | null): Promise<T> {
    const { model, priority } = ask;
    // Its client left before it got here: an abort event already fired would never reach it.
    if (signal.aborted) return Promise.reject(new Error('client went away before it was queued'));
    const tenant = ask.tenant ?? UNSEEN_TENANT;
    const q = this.roomFor(ask, tenant);
    const timeoutAt = performance.now() + this.config.routerQueueTimeoutMs;
    return new Promise<T>((resolve, reject) => {
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
        tenant: tenant.id,
        weight: tenant.weight,
        ...(deadlineMs === null ? {} : { deadlineMs }),
        resolve: (value) => {
          done();
          resolve(value);
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
          const lateBy = this.host.lateBy(ask, deadlineMs, now);
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
   * Hands free workers to waiters: critical ones first, each class in queue order. A head that
   * can no longer make its deadline is refused; one that must wait holds its class behind it.
   * Serving a head can free a worker (a lease re-judges it) and so ask for a drain again: that
   * one runs after the current head is taken out, never in the middle, where it would serve the
   * same head twice and leave the next one out of the queue unserved.
   */
  drain(modelName: string): void {
    this.toDrain.add(modelName);
    if (this.draining) return;
    this.draining = true;
    try {
      // A Set visits what is added while it is iterated: the drains asked for meanwhile run here.
      for (const name of this.toDrain) {
        this.toDrain.delete(name);
        this.drainModel(name);
      }
    } finally {
      this.draining = false;
    }
  }

  private drainModel(modelName: string): void {
    const queue = this.queues.get(modelName);
    const model = this.registry.model(modelName);
    if (!queue || !model) return;
    for (const c of PRIORITY_CLASSES) {
      const waiting = queue.of(c);
      while (waiting.size > 0) {
        const head = waiting.peek();
        if (!head) break;
        const served = this.host.serve(model, c, head);
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

  /**
   * The model's queue with room for the ask: a full queue makes room by refusing a waiter of a
   * lower class, else one of its class whose tenant is further over its weighted share than the
   * ask's tenant would be; else the ask is refused.
   */
  private roomFor(ask: Ask, tenant: RequestTenant): ClassQueues<T> {
    const model = ask.model.name;
    const c = ask.priority;
    let queue = this.queues.get(model);
    if (!queue) {
      queue = new ClassQueues<T>();
      this.queues.set(model, queue);
    }
    if (queue.size >= this.config.routerQueueMaxDepth) {
      // Full: a waiter of a lower class gives up its place, else one of a heavier tenant.
      const evicted = queue.evictBelow(c);
      if (evicted) {
        evicted.reject(new ServiceOverloadedError(model, QUEUE_EVICTED));
        return queue;
      }
      const over = queue.evictOverShare(c, tenant.id, tenant.weight);
      if (!over) throw new ServiceOverloadedError(model, QUEUE_FULL);
      over.reject(new ServiceOverloadedError(model, QUEUE_FULL));
    }
    return queue;
  }
}
