import { perClass, PRIORITY_CLASSES, PriorityClass } from '../../config/priority';
import { RouterQueue, Waiter } from './router-queue';

/**
 * The router queue of one model with its waiters kept by priority class (docs/security.md#priority-classes-who-may-set-x-sluice-priority): served
 * critical first, then standard, then sheddable, first come first served within a class. One
 * FIFO per class keeps every step O(1): a waiter leaves its own list, and "is anyone of this
 * class or higher waiting?" looks at three counts.
 */
export class ClassQueues<T> {
  private readonly queues = perClass(() => new RouterQueue<T>());

  /** Waiters of every class. */
  get size(): number {
    const q = this.queues;
    return q.critical.size + q.standard.size + q.sheddable.size;
  }

  /** The FIFO of one class, to serve (`shift`) in order. */
  of(c: PriorityClass): RouterQueue<T> {
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

  /** Appends to the class's FIFO; the remover is true when the waiter was still queued. */
  push(c: PriorityClass, waiter: Waiter<T>): () => boolean {
    return this.queues[c].push(waiter);
  }

  /**
   * Takes out the newest waiter of the lowest class below `c`, to make room for a waiter of
   * class `c` in a full queue; undefined when every waiter is of class `c` or higher.
   */
  evictBelow(c: PriorityClass): Waiter<T> | undefined {
    for (let i = PRIORITY_CLASSES.length - 1; PRIORITY_CLASSES[i] !== c; i--) {
      const evicted = this.queues[PRIORITY_CLASSES[i]].pop();
      if (evicted) return evicted;
    }
    return undefined;
  }
}
