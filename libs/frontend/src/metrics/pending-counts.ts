import type { Counter } from 'prom-client';

/** Label values, one level per label name: a map of the next level, or the count at the last. */
type Level = Map<string, Level | Cell>;
interface Cell {
  n: number;
}

/**
 * Increments of a labelled prom-client counter, kept as plain numbers until the counter is read.
 * prom-client's `inc` builds and hashes a string of the whole label set and checks every label
 * on each call: on the rejection path, where three counters count each 503, that was the largest
 * part of Sluice's own work per answer. Here an increment is one map lookup per label, on values
 * the caller already holds, and the counts reach the counter in its `collect`, which prom-client
 * runs before every read (a scrape, `get()`): a reader never misses an increment. The counter
 * must be declared with `collect: flushPendingCounts` (`metrics.providers.ts`).
 */
export class PendingCounts<L extends string> {
  private pending: Level = new Map();
  /** The label sets this has counted into the counter, by their first value, for `forget`. */
  private readonly series = new Map<string, Map<string, Record<L, string>>>();

  constructor(
    private readonly counter: Counter<L>,
    /** The counter's label names, in the order `inc` takes their values. */
    private readonly labelNames: readonly L[],
  ) {
    let mine = PENDING.get(counter);
    if (mine === undefined) PENDING.set(counter, (mine = new Set()));
    mine.add(this);
  }

  /** One increment of the series with these label values, in `labelNames` order. */
  inc(values: readonly string[]): void {
    let level = this.pending;
    const last = values.length - 1;
    for (let i = 0; i < last; i++) {
      let next = level.get(values[i]) as Level | undefined;
      if (next === undefined) level.set(values[i], (next = new Map()));
      level = next;
    }
    let cell = level.get(values[last]) as Cell | undefined;
    if (cell === undefined) level.set(values[last], (cell = { n: 0 }));
    cell.n++;
  }

  /**
   * Removes from the counter every series counted here whose first label has this value (a
   * model the registry forgot), and drops what is pending for them.
   */
  forget(first: string): void {
    this.pending.delete(first);
    for (const labels of this.series.get(first)?.values() ?? []) this.counter.remove(labels);
    this.series.delete(first);
  }

  /** Moves every pending count into the counter. */
  flush(): void {
    const pending = this.pending;
    if (pending.size === 0) return;
    this.pending = new Map();
    const values: string[] = [];
    const walk = (level: Level, depth: number): void => {
      for (const [value, next] of level) {
        values[depth] = value;
        if (depth === this.labelNames.length - 1) this.add(values, (next as Cell).n);
        else walk(next as Level, depth + 1);
      }
    };
    walk(pending, 0);
  }

  private add(values: readonly string[], n: number): void {
    let known = this.series.get(values[0]);
    if (known === undefined) {
      known = new Map<string, Record<L, string>>();
      this.series.set(values[0], known);
    }
    const key = values.join('\0');
    let labels = known.get(key);
    if (labels === undefined) {
      const made = {} as Record<L, string>;
      this.labelNames.forEach((name, i) => (made[name] = values[i]));
      known.set(key, (labels = made));
    }
    this.counter.inc(labels, n);
  }

  /** Flushes, and leaves the counter's reads (the app that counted closes). */
  close(): void {
    this.flush();
    PENDING.get(this.counter)?.delete(this);
  }
}

/** The pending counts of each counter (one per app that counts into it: tests start several). */
const PENDING = new WeakMap<Counter, Set<PendingCounts<string>>>();

/** The `collect` of a counter counted through `PendingCounts`: flushes them before a read. */
export function flushPendingCounts(this: Counter): void {
  const mine = PENDING.get(this);
  if (mine !== undefined) for (const p of mine) p.flush();
}
