/**
 * What a rank's newest report still shows that this frontend knows is over: requests of its own
 * that the report holds (it was measured while they ran) and that ended since, and those that
 * waited in the engine's queue and have had their first token since. Taken off the report until
 * a report measured after them arrives. An engine whose slots turn over within one report
 * interval (llama.cpp: a slot is a whole request) is otherwise judged full for up to that
 * interval after a slot freed, and its slots stand idle (docs/engines.md, "llama.cpp server").
 */
export class SinceReport {
  /** KV blocks of requests that ended since the report was measured. */
  blocks = 0;
  /** Requests that waited in the queue when the report was measured and have started since. */
  waiting = 0;
  private events: Array<{ atMs: number; blocks: number; waiting: number }> = [];
  private head = 0;

  /** A request the report holds ended (`blocks`) or left the queue (`waiting` 1) at `atMs`. */
  add(atMs: number, blocks: number, waiting: number): void {
    this.events.push({ atMs, blocks, waiting });
    this.blocks += blocks;
    this.waiting += waiting;
  }

  /** A report measured at `measuredAtMs` arrived: what happened before it is in it. */
  drop(measuredAtMs: number): void {
    while (this.head < this.events.length && this.events[this.head].atMs <= measuredAtMs) {
      const e = this.events[this.head++];
      this.blocks -= e.blocks;
      this.waiting -= e.waiting;
    }
    if (this.head === this.events.length) {
      this.events = [];
      this.head = 0;
    } else if (this.head >= 64 && this.head * 2 >= this.events.length) {
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
  }

  /** `reported` less what ended since, never below 0 (another frontend's report may be older). */
  static less(reported: number, since: number, dpSize: number): number {
    return since === 0 ? reported : Math.max(0, reported - since / dpSize);
  }
}
