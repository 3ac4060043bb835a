/** A request waiting for a worker to drop below the router's in-flight threshold. */
export interface Waiter<T> {
  readonly promptTokens: number;
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
 * FIFO of waiters for one model, as a doubly linked list so that a waiter that times out or
 * whose client goes away leaves in O(1) from anywhere in the queue.
 */
export class RouterQueue<T> {
  private first: Node<T> | undefined;
  private last: Node<T> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Appends; returns a remover that is true when the waiter was still queued. */
  push(waiter: Waiter<T>): () => boolean {
    const node: Node<T> = { waiter, prev: this.last, next: undefined, queued: true };
    if (this.last) this.last.next = node;
    else this.first = node;
    this.last = node;
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
