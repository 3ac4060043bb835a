import { Logger } from '@nestjs/common';

/** A dead worker fails every request sent to it until it expires: one line per worker per window. */
export const FAILURE_LOG_INTERVAL_MS = 10_000;
const MAX_TRACKED = 1024;

/**
 * Logs worker failures (refused or cut connections, timeouts, 5xx) so that an operator sees a
 * worker die before its TTL runs out, even when every client was served by a retry. Throttled
 * per worker: the first failure is logged at once, later ones are counted into the next line.
 */
export class UpstreamFailuresLogger {
  private readonly logger = new Logger('Router');
  private readonly windows = new Map<string, { since: number; suppressed: number }>();

  failed(workerId: string, endpoint: string, reason: string, outcome: string): void {
    const now = Date.now();
    const window = this.windows.get(workerId);
    if (window && now - window.since < FAILURE_LOG_INTERVAL_MS) {
      window.suppressed++;
      return;
    }
    const more = window?.suppressed ? ` (+${window.suppressed} more failures not logged)` : '';
    this.logger.warn(`worker ${workerId} at ${endpoint} failed: ${reason}; ${outcome}${more}`);
    if (!window && this.windows.size >= MAX_TRACKED) this.forgetOld(now);
    this.windows.set(workerId, { since: now, suppressed: 0 });
  }

  private forgetOld(now: number): void {
    for (const [id, w] of this.windows) {
      if (now - w.since >= FAILURE_LOG_INTERVAL_MS) this.windows.delete(id);
    }
    // Every tracked worker failed within the window: drop the oldest rather than grow.
    if (this.windows.size >= MAX_TRACKED) {
      this.windows.delete(this.windows.keys().next().value as string);
    }
  }
}
