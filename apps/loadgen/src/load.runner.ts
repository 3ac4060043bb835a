import { setMaxListeners } from 'node:events';
import { Pool } from 'undici';
import { realClock, runArrivalSchedule, ScheduleClock } from './arrival.schedule';
import { LoadgenOptions } from './loadgen.options';
import { ProgressOutput, ProgressReporter } from './progress.reporter';
import { RequestSender } from './request.sender';
import { classifyFailure, RequestOutcome } from './response.classifier';
import { RunStats } from './run.stats';
import { buildSummary, LoadSummary, unreachableMessage } from './summary.report';

export interface LoadRunResult {
  summary: LoadSummary;
  /** Set when no request could connect at all: the CLI exits 1 with this message. */
  unreachable: string | null;
}

/** One keep-alive connection per request in flight, so --max-inflight is the only cap. */
function createPool(options: LoadgenOptions): Pool {
  return new Pool(options.url.origin, {
    connections: options.maxInflight,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    // The drain timeout bounds slow answers; a long generation must not be cut off earlier.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
}

/** After aborting, in-flight requests settle within milliseconds; this only bounds a bug. */
const ABORT_GRACE_MS = 5000;

/**
 * One open-loop run: arrivals for the send window, then a bounded drain, then the summary.
 * Every sent request ends as exactly one of 200, 503, other error or aborted.
 */
export class LoadRun {
  private readonly stats = new RunStats();
  private readonly stopArrivals = new AbortController();
  private readonly abortRequests = new AbortController();
  private idleWaiters: (() => void)[] = [];
  private interrupted = false;
  private lastSettledAt = 0;

  constructor(
    private readonly options: LoadgenOptions,
    private readonly progressOut: ProgressOutput,
    private readonly clock: ScheduleClock = realClock,
  ) {
    // Every in-flight request listens on this one signal; thousands are expected.
    setMaxListeners(0, this.abortRequests.signal);
  }

  /** Ctrl-C: stop sending, abort what is in flight, still report what was seen. */
  interrupt(): void {
    this.interrupted = true;
    this.stopArrivals.abort();
    this.abortRequests.abort();
  }

  async execute(): Promise<LoadRunResult> {
    const o = this.options;
    const pool = createPool(o);
    const sender = new RequestSender(pool, o, this.abortRequests.signal);
    const t0 = this.clock.now();
    const progress = o.quiet
      ? null
      : new ProgressReporter(this.progressOut, () => this.stats.snapshot(), t0);
    progress?.start();
    let windowEnd = t0;
    try {
      windowEnd = await this.sendWindow(sender, t0);
      progress?.setPhase('draining');
      await this.drain(o.drainTimeoutS * 1000);
    } finally {
      progress?.stop();
      await pool.destroy();
    }
    const summary = buildSummary(o, this.stats, {
      elapsedMs: Math.max(windowEnd, this.lastSettledAt) - t0,
      interrupted: this.interrupted,
    });
    return { summary, unreachable: unreachableMessage(summary, this.stats) };
  }

  /** Runs the arrivals, then waits out the rest of the window; returns when it ended. */
  private async sendWindow(sender: RequestSender, t0: number): Promise<number> {
    const { rate, durationS } = this.options;
    const signal = this.stopArrivals.signal;
    await runArrivalSchedule({
      rate,
      durationS,
      t0,
      clock: this.clock,
      signal,
      onArrival: (index, lagMs) => this.arrive(sender, index, lagMs),
    });
    await this.clock.sleep(t0 + durationS * 1000 - this.clock.now(), signal);
    return this.clock.now();
  }

  private arrive(sender: RequestSender, index: number, lagMs: number): void {
    this.stats.arrival(lagMs);
    if (this.stats.inflight >= this.options.maxInflight) {
      this.stats.dropped();
      return;
    }
    this.stats.sent();
    void sender
      .send(index)
      .catch((err: unknown) => classifyFailure(err))
      .then((outcome) => this.settle(outcome));
  }

  private settle(outcome: RequestOutcome): void {
    this.stats.settled(outcome);
    this.lastSettledAt = this.clock.now();
    if (this.stats.inflight === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** Waits for in-flight requests up to `timeoutMs`, then aborts the rest. */
  private async drain(timeoutMs: number): Promise<void> {
    if (!(await this.waitIdle(timeoutMs))) {
      this.abortRequests.abort();
      await this.waitIdle(ABORT_GRACE_MS);
    }
  }

  private async waitIdle(timeoutMs: number): Promise<boolean> {
    if (this.stats.inflight === 0) return true;
    const cancelTimer = new AbortController();
    const idle = new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const timeout = this.clock.sleep(timeoutMs, cancelTimer.signal).then(() => false);
    const drained = await Promise.race([idle, timeout]);
    cancelTimer.abort();
    return drained;
  }
}
