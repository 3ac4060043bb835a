import { PriorityClass } from '../config/priority';
import { RankState, WorkerEntry } from './worker-entry';

/** Judges a rank again once its dwell has ended. */
export type DwellEnded = (worker: WorkerEntry, state: RankState, nowMs: number) => void;

/**
 * For one priority class, the ranks whose busy state for it changed less than `--busy-min-dwell-ms` ago, in the order they
 * changed, which is also the order their dwells end (every dwell is as long). A rank keeps its
 * state while its dwell runs, whatever its reports say; so when the dwell ends it is judged again
 * on its current load, even if no report arrives then (a worker may report only once a second,
 * or not at all while its load is steady). One timer, for the oldest dwell: the cost is one
 * judgement per state change, never a scan.
 */
export class DwellQueue {
  private readonly ranks = new Map<RankState, WorkerEntry>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly dwellMs: number,
    private readonly c: PriorityClass,
    private readonly ended: DwellEnded,
  ) {}

  get size(): number {
    return this.ranks.size;
  }

  /** The rank's busy state changed at `nowMs`: it holds until `nowMs + dwell`. */
  start(worker: WorkerEntry, state: RankState, nowMs: number): void {
    state.heldUntil[this.c] = nowMs + this.dwellMs;
    // A rank already waiting moves to the end: its new dwell ends after every other one.
    this.ranks.delete(state);
    this.ranks.set(state, worker);
    if (this.timer === undefined) this.arm(nowMs);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.ranks.clear();
  }

  private arm(nowMs: number): void {
    const oldest = this.ranks.keys().next();
    if (oldest.done) {
      this.timer = undefined;
      return;
    }
    this.timer = setTimeout(() => this.fire(), Math.max(1, oldest.value.heldUntil[this.c] - nowMs));
    this.timer.unref();
  }

  private fire(): void {
    const now = Date.now();
    for (const [state, worker] of this.ranks) {
      if (state.heldUntil[this.c] > now) break;
      this.ranks.delete(state);
      // May start a new dwell: appended, it ends after `now`, so the loop stops before it.
      this.ended(worker, state, now);
    }
    this.arm(now);
  }
}
