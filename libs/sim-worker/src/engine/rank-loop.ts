import { RankScheduler, StepPlan } from './rank-scheduler';
import { stepDurationMs } from './step-timing';

/**
 * Drives one rank's scheduler in (simulated) real time: plan a step, wait its duration,
 * apply it, repeat until the rank is idle. With speedup 0 the steps still yield to the
 * event loop (setImmediate) between plan and apply, so HTTP traffic keeps flowing.
 */
export class RankLoop {
  private cancelPending: (() => void) | null = null;
  /** When the current step ends in ideal time; absorbs timer lateness across steps. */
  private deadline = 0;
  private closed = false;

  constructor(
    readonly scheduler: RankScheduler,
    private speedup: number,
    private readonly onChange: () => void,
    /** After each step is applied (engine formats that write their gauges per step). */
    private readonly onStep: (plan: StepPlan) => void = () => undefined,
  ) {}

  /** Applies from the next step on; the step under way keeps its planned duration. */
  setSpeedup(speedup: number): void {
    this.speedup = speedup;
  }

  /** Starts stepping if the rank is idle; requests arriving in the same tick share a step. */
  wake(): void {
    if (this.cancelPending || this.closed) return;
    this.defer(0, () => this.step());
  }

  close(): void {
    this.closed = true;
    this.cancelPending?.();
    this.cancelPending = null;
  }

  private step(): void {
    this.cancelPending = null;
    const plan = this.scheduler.planStep();
    this.onChange();
    if (!plan) return;
    this.defer(this.durationOf(plan), () => {
      this.scheduler.completeStep(plan);
      this.onChange();
      this.onStep(plan);
      this.step();
    });
  }

  private durationOf(plan: StepPlan): number {
    const decoding = plan.decoding.length > 0;
    return stepDurationMs(plan.prefillTokens, decoding, plan.utilisation, this.speedup);
  }

  private defer(ms: number, run: () => void): void {
    if (ms <= 0) {
      const handle = setImmediate(run);
      this.cancelPending = () => clearImmediate(handle);
      return;
    }
    const now = Date.now();
    this.deadline = Math.max(this.deadline, now) + ms;
    // Rounding per step does not accumulate: the next step is measured from the ideal deadline.
    const wait = Math.round(this.deadline - now);
    if (wait <= 0) {
      this.defer(0, run);
      return;
    }
    const handle = setTimeout(run, wait);
    this.cancelPending = () => clearTimeout(handle);
  }
}
