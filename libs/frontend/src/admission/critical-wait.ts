import { Injectable } from '@nestjs/common';
import { PriorityClass } from '../config/priority';

/** One model's counts: its lower-class requests in flight, and critical requests waiting. */
interface Held {
  lower: number;
  waiting: number;
}

/**
 * The rule that lets a critical request wait instead of being refused (docs/security.md#priority-classes-who-may-set-x-sluice-priority): a critical
 * request that finds every worker of its model busy waits in the router queue while this frontend
 * has more standard and sheddable requests in flight on the model than critical requests already
 * waiting for it, since each of those frees room when it ends. The router keeps the counts (a
 * lease of a lower class, a critical waiter); the admission decision and the router read them, so
 * the check is one map read. (docs/decisions/0165-critical-waits-for-lower-class-capacity.md)
 */
@Injectable()
export class CriticalWait {
  private readonly models = new Map<string, Held>();

  /** Whether a critical request for the model that finds every worker busy may wait. */
  mayWait(model: string): boolean {
    const held = this.models.get(model);
    return held !== undefined && held.lower > held.waiting;
  }

  /** A request of class `c` was sent to a worker of the model; only lower classes count. */
  started(model: string, c: PriorityClass): void {
    if (c !== 'critical') this.add(model, 1, 0);
  }

  /** A request counted by `started` ended. */
  ended(model: string, c: PriorityClass): void {
    if (c !== 'critical') this.add(model, -1, 0);
  }

  /** A critical request began to wait for the model (`left` when it is served or gives up). */
  queued(model: string): void {
    this.add(model, 0, 1);
  }

  left(model: string): void {
    this.add(model, 0, -1);
  }

  private add(model: string, lower: number, waiting: number): void {
    let held = this.models.get(model);
    if (!held) {
      held = { lower: 0, waiting: 0 };
      this.models.set(model, held);
    }
    held.lower += lower;
    held.waiting += waiting;
    // Counts of models without traffic go, so a model the registry forgot leaves nothing behind.
    if (held.lower === 0 && held.waiting === 0) this.models.delete(model);
  }
}
