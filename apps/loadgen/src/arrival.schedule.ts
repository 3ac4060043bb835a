import { setTimeout as delay } from 'node:timers/promises';

/** Time source of the schedule; tests drive it with a fake clock whose timers fire late. */
export interface ScheduleClock {
  now(): number;
  /** Resolves after about `ms`, or as soon as `signal` aborts; never rejects. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: ScheduleClock = {
  now: () => performance.now(),
  // Node truncates fractional delays, which would wake us just before the arrival is due.
  sleep: (ms, signal) =>
    delay(Math.max(0, Math.ceil(ms)), undefined, { signal }).catch(() => undefined),
};

/** Arrivals in a window of `durationS`: every i with i / rate < duration. */
export function arrivalCount(rate: number, durationS: number): number {
  // The epsilon keeps 0.3/s × 10 s (2.9999…96 or 3.0000…4 in floating point) at 3 arrivals.
  return Math.max(0, Math.ceil(rate * durationS - 1e-9));
}

/**
 * When arrival `index` is due, relative to t0. Computed from the index rather than by adding
 * 1/rate per arrival, so rounding cannot accumulate into drift over a long run.
 */
export function arrivalOffsetMs(index: number, rate: number): number {
  return (index * 1000) / rate;
}

export interface ArrivalScheduleOptions {
  rate: number;
  durationS: number;
  /** Clock reading at which arrival 0 is due. */
  t0: number;
  clock: ScheduleClock;
  /** Aborting stops further arrivals (Ctrl-C). */
  signal?: AbortSignal;
  /** Called once per arrival, in order; `lagMs` is how late it fired. Must not block. */
  onArrival: (index: number, lagMs: number) => void;
}

/**
 * Open-loop schedule: arrival i fires at t0 + i/rate whatever happened to earlier requests.
 * One timer at a time; when a timer fires late (GC pause, busy event loop) every arrival that
 * fell due meanwhile fires at once, so the run keeps its rate and ends on time.
 * Resolves with the number of arrivals fired.
 */
export async function runArrivalSchedule(options: ArrivalScheduleOptions): Promise<number> {
  const { rate, t0, clock, signal, onArrival } = options;
  const total = arrivalCount(rate, options.durationS);
  let next = 0;
  while (next < total && signal?.aborted !== true) {
    let elapsed = clock.now() - t0;
    while (next < total && arrivalOffsetMs(next, rate) <= elapsed) {
      onArrival(next, elapsed - arrivalOffsetMs(next, rate));
      next += 1;
      elapsed = clock.now() - t0;
    }
    if (next < total) await clock.sleep(arrivalOffsetMs(next, rate) - elapsed, signal);
  }
  return next;
}
