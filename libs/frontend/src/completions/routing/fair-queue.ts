import { RouterQueue, Waiter } from './router-queue';

/** One tenant's waiters of a class and its virtual time. */
interface Flow<T> {
  readonly tenant: string;
  readonly queue: RouterQueue<T>;
  weight: number;
  /** Virtual start time of its next waiter: requests served so far, each counted 1/weight. */
  vtime: number;
}

/**
 * The waiters of one model and class, shared between tenants in proportion to their weights
 * (docs/decisions/0195-tenant-fair-share.md): a virtual-time fair queue as in VTC. Each tenant
 * has a virtual time that a served request advances by 1/weight; the next waiter served is the
 * head of the backlogged tenant with the lowest virtual time. A tenant that starts waiting
 * again is lifted to the queue's clock (the virtual time of the last one served), so time
 * spent without waiters banks no credit, and a lone tenant gets everything (work-conserving).
 * Within a tenant, waiters keep the order of `RouterQueue` (earliest deadline, then arrival).
 * A pick scans the tenants: O(tenants) per dispatch.
 */
export class FairQueue<T> {
  /** Backlogged tenants, and idle ones still ahead of the clock (their virtual time matters). */
  private readonly flows = new Map<string, Flow<T>>();
  private clock = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Appends to its tenant's queue; the remover is true when the waiter was still queued. */
  push(waiter: Waiter<T>): () => boolean {
    const tenant = waiter.tenant ?? '';
    let flow = this.flows.get(tenant);
    if (!flow) {
      flow = { tenant, queue: new RouterQueue<T>(), weight: 1, vtime: this.clock };
      this.flows.set(tenant, flow);
    } else if (flow.queue.size === 0) {
      flow.vtime = Math.max(flow.vtime, this.clock);
    }
    flow.weight = waiter.weight ?? 1;
    const remove = flow.queue.push(waiter);
    this.count++;
    const f = flow;
    return () => {
      if (!remove()) return false;
      this.count--;
      this.forgetIfDone(f);
      return true;
    };
  }

  /** The waiter `shift` would take. */
  peek(): Waiter<T> | undefined {
    return this.next()?.queue.peek();
  }

  /** Takes the head of the tenant with the lowest virtual time and advances that time. */
  shift(): Waiter<T> | undefined {
    const flow = this.next();
    if (!flow) return undefined;
    const waiter = flow.queue.shift();
    this.count--;
    this.clock = Math.max(this.clock, flow.vtime);
    flow.vtime += 1 / flow.weight;
    this.forgetIfDone(flow);
    return waiter;
  }

  /**
   * The tenant furthest over its share of the queue (most waiters per unit of weight) and that
   * share; undefined when nobody waits.
   */
  heaviest(): { tenant: string; share: number } | undefined {
    const flow = this.heaviestFlow();
    return flow && { tenant: flow.tenant, share: flow.queue.size / flow.weight };
  }

  /** How many waiters the tenant has here. */
  waitingOf(tenant: string): number {
    return this.flows.get(tenant)?.queue.size ?? 0;
  }

  /** Removes the newest waiter of the tenant furthest over its share. */
  pop(): Waiter<T> | undefined {
    const flow = this.heaviestFlow();
    if (!flow) return undefined;
    const waiter = flow.queue.pop();
    this.count--;
    this.forgetIfDone(flow);
    return waiter;
  }

  private next(): Flow<T> | undefined {
    let best: Flow<T> | undefined;
    for (const flow of this.flows.values()) {
      if (flow.queue.size === 0) {
        if (flow.vtime <= this.clock) this.flows.delete(flow.tenant);
        continue;
      }
      if (!best || flow.vtime < best.vtime) best = flow;
    }
    return best;
  }

  private heaviestFlow(): Flow<T> | undefined {
    let best: Flow<T> | undefined;
    let most = 0;
    for (const flow of this.flows.values()) {
      const share = flow.queue.size / flow.weight;
      if (share > most) [best, most] = [flow, share];
    }
    return best;
  }

  /**
   * Drops a tenant without waiters once the clock has caught up with it (it would be lifted to
   * the clock anyway), and every such tenant when nobody waits: the map holds at most the
   * tenants that wait plus a few just served.
   */
  private forgetIfDone(flow: Flow<T>): void {
    if (flow.queue.size > 0) return;
    if (this.count === 0) {
      this.flows.clear();
      return;
    }
    if (flow.vtime <= this.clock) this.flows.delete(flow.tenant);
  }
}
