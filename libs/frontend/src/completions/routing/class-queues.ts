import { perClass, PRIORITY_CLASSES, PriorityClass } from '../../config/priority';
import { FairQueue } from './fair-queue';
import { Waiter } from './router-queue';

/**
 * The router queue of one model with its waiters kept by priority class (docs/security.md#priority-classes-who-may-set-x-sluice-priority): served
 * critical first, then standard, then sheddable, and within a class between tenants in proportion
 * to their weights (`FairQueue`). A waiter leaves its own list in O(1), and "is anyone of this
 * class or higher waiting?" looks at three counts.
 */
export class ClassQueues<T> {
  private readonly queues = perClass(() => new FairQueue<T>());

  /** Waiters of every class. */
  get size(): number {
    const q = this.queues;
    return q.critical.size + q.standard.size + q.sheddable.size;
  }

  /** The queue of one class, to serve (`shift`) in order. */
  of(c: PriorityClass): FairQueue<T> {
    return this.queues[c];
  }

  /** Waiters that a newcomer of class `c` must not overtake: its own class and higher ones. */
  aheadOf(c: PriorityClass): number {
    let n = 0;
    for (const k of PRIORITY_CLASSES) {
      n += this.queues[k].size;
      if (k === c) return n;
    }
    return n;
  }

  /** Appends to the class's queue; the remover is true when the waiter was still queued. */
  push(c: PriorityClass, waiter: Waiter<T>): () => boolean {
    return this.queues[c].push(waiter);
  }

  /**
   * Takes out a waiter of the lowest class below `c` (the newest of the tenant furthest over its
   * share), to make room for a waiter of class `c` in a full queue; undefined when every waiter
   * is of class `c` or higher.
   */
  evictBelow(c: PriorityClass): Waiter<T> | undefined {
    for (let i = PRIORITY_CLASSES.length - 1; PRIORITY_CLASSES[i] !== c; i--) {
      const evicted = this.queues[PRIORITY_CLASSES[i]].pop();
      if (evicted) return evicted;
    }
    return undefined;
  }

  /**
   * Takes out the newest waiter of class `c` of the tenant furthest over its share of the queue,
   * to make room for a newcomer of the same class from `tenant` (weight `weight`); undefined
   * when the newcomer's tenant, counting the newcomer, would be at least as far over: then the
   * newcomer is the one refused.
   */
  evictOverShare(c: PriorityClass, tenant: string, weight: number): Waiter<T> | undefined {
    const q = this.queues[c];
    const heaviest = q.heaviest();
    if (!heaviest || heaviest.tenant === tenant) return undefined;
    if (heaviest.share <= (q.waitingOf(tenant) + 1) / weight) return undefined;
    return q.pop();
  }
}
