import { Logger } from '@nestjs/common';
import { LogThrottle } from './log-throttle';
import { publisherName } from './report-publishers';
import { ModelEntry, WorkerEntry } from './worker-entry';

/** One worker writes at most 2 busy/free lines at once, then one per this many ms. */
export const TRANSITION_LOG_INTERVAL_MS = 5000;
/** Joins and removals of all workers together: a burst of 50 lines, then 1 a second. */
const MEMBERSHIP_LOG_BURST = 50;
const MEMBERSHIP_LOG_INTERVAL_MS = 1000;

/**
 * The registry's log lines, rate-limited: a worker hovering at a threshold flips on every
 * report, and anyone on the bus can make workers join by the thousand. Lines left out are
 * counted in the next one; `flush` writes the newest left-out line once allowed, so the log
 * still ends with every worker's current state.
 */
export class WorkerEventLog {
  private readonly logger = new Logger('WorkerMonitor');
  private readonly write = (line: string): void => this.logger.log(line);
  private readonly transitions = new LogThrottle(
    this.write,
    TRANSITION_LOG_INTERVAL_MS,
    2,
    'transitions',
  );
  private readonly membership = new LogThrottle(
    this.write,
    MEMBERSHIP_LOG_INTERVAL_MS,
    MEMBERSHIP_LOG_BURST,
    'joins or removals',
  );

  /** Workers already warned of two publishers: once each, as long as the worker lives. */
  private readonly warnedConflict = new WeakSet<WorkerEntry>();

  /** Two or more publishers report a rank of the worker: warned once per worker. */
  publishersConflict(worker: WorkerEntry, rank: number, publishers: Iterable<string>): void {
    if (this.warnedConflict.has(worker)) return;
    this.warnedConflict.add(worker);
    const names = [...publishers].map(publisherName).join(' and ');
    this.logger.warn(
      `worker ${worker.id} of model '${worker.model}' rank ${rank} is reported by ${names}: ` +
        'judged by the higher load (docs/operations.md#two-publishers-for-one-worker)',
    );
  }

  joined(worker: WorkerEntry): void {
    const text = `worker ${worker.id} joined model '${worker.model}' at ${worker.endpoint}`;
    this.membership.line('membership', text, Date.now());
  }

  removed(worker: WorkerEntry, reason: string): void {
    this.transitions.forget(worker.id);
    const text = `worker ${worker.id} of model '${worker.model}' removed (${reason})`;
    this.membership.line('membership', text, Date.now());
  }

  busyChanged(worker: WorkerEntry, model: ModelEntry | undefined): void {
    const text =
      `worker ${worker.id} of model '${worker.model}' is now ${worker.busy ? 'BUSY' : 'free'} ` +
      `(${model?.free.length ?? 0} of ${model?.workers.size ?? 0} workers free)`;
    this.transitions.line(worker.id, text, Date.now());
  }

  flush(nowMs: number): void {
    this.transitions.flush(nowMs);
    this.membership.flush(nowMs);
  }
}
