/** A request waiting for a worker to drop below the router's in-flight threshold. */
export interface Waiter<T> {
  readonly promptTokens: number;
  /** The request's output limit (absent: none set), for the KV blocks reserved when leased. */
  readonly maxTokens?: number;
  /**
   * `performance.now()` by which its first token is due (arrival + its class's TTFT objective);
   * absent: no objective. The queue is kept in deadline order, absent last.
   */
  readonly deadlineMs?: number;
  /** Whom it is charged to (docs/api.md#tenants) and that tenant's weight, for the fair share. */
  readonly tenant?: string;
  readonly weight?: number;
  resolve(value: T): void;
  reject(err: Error): void;
}

interface Node<T> {
  waiter: Waiter<T>;
  prev: Node<T> | undefined;
  next: Node<T> | undefined;
  queued: boolean;
}

/**
 * Waiters of one model and class, earliest deadline first (docs/operations.md#ttft-objective, TTFT objective) and first
 * come first served among equal deadlines or without one, as a doubly linked list so that a
 * waiter that times out or whose client goes away leaves in O(1) from anywhere in the queue. A
 * class's waiters share one objective, so arrival order is deadline order and a push is O(1); only
 * after the objective changes does a push walk back past the waiters due later.
 */
export class RouterQueue<T> {
  private first: Node<T> | undefined;
  private last: Node<T> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /**
   * Inserts after every waiter due no later (appends without deadlines); returns a remover that
   * is true when the waiter was still queued.
   */
  push(waiter: Waiter<T>): () => boolean {
    const due = waiter.deadlineMs ?? Infinity;
    let prev = this.last;
    while (prev && (prev.waiter.deadlineMs ?? Infinity) > due) prev = prev.prev;
    const next = prev ? prev.next : this.first;
    const node: Node<T> = { waiter, prev, next, queued: true };
    if (prev) prev.next = node;
    else this.first = node;
    if (next) next.prev = node;
    else this.last = node;
    this.count++;
    return () => this.unlink(node);
  }

  peek(): Waiter<T> | undefined {
    return this.first?.waiter;
  }

  shift(): Waiter<T> | undefined {
    const node = this.first;
    if (!node) return undefined;
    this.unlink(node);
    return node.waiter;
  }

  /** Removes the newest waiter. */
  pop(): Waiter<T> | undefined {
    const node = this.last;
    if (!node) return undefined;
    this.unlink(node);
    return node.waiter;
  }

  private unlink(node: Node<T>): boolean {
    if (!node.queued) return false;
    node.queued = false;
    if (node.prev) node.prev.next = node.next;
    else this.first = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.last = node.prev;
    this.count--;
    return true;
  }
}
