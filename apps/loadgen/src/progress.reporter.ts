import { RunCounters } from './run.stats';

export type RunPhase = 'sending' | 'draining' | 'done';

export interface ProgressOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** One progress line: totals, in flight, and the 200s and 503s completed since `previous`. */
export function formatProgressLine(
  elapsedS: number,
  phase: RunPhase,
  now: RunCounters,
  previous: RunCounters,
): string {
  const inflight = now.sent - now.ok - now.rejected - now.other - now.aborted;
  const parts = [
    `[${elapsedS.toFixed(0).padStart(4)}s ${phase.padEnd(8)}]`,
    `sent ${now.sent}`,
    `200 ${now.ok}`,
    `503 ${now.rejected}`,
    `err ${now.other}`,
    `inflight ${inflight}`,
  ];
  if (now.dropped > 0) parts.push(`dropped ${now.dropped}`);
  if (now.aborted > 0) parts.push(`aborted ${now.aborted}`);
  const last = `last 1s: 200 +${now.ok - previous.ok} 503 +${now.rejected - previous.rejected}`;
  return `${parts.join('  ')}  | ${last}`;
}

/**
 * Writes the progress line every second on stderr: rewritten in place on a terminal, one line
 * per second otherwise (logs, CI), so 503s can be seen to start and stop.
 */
export class ProgressReporter {
  private timer: NodeJS.Timeout | undefined;
  private previous: RunCounters;
  private phase: RunPhase = 'sending';

  constructor(
    private readonly out: ProgressOutput,
    private readonly read: () => RunCounters,
    private readonly t0: number,
  ) {
    this.previous = read();
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), 1000);
  }

  setPhase(phase: RunPhase): void {
    this.phase = phase;
  }

  /** Prints the final state and leaves the cursor on a fresh line. */
  stop(): void {
    clearInterval(this.timer);
    this.phase = 'done';
    this.tick();
    if (this.out.isTTY === true) this.out.write('\n');
  }

  private tick(): void {
    const now = this.read();
    const elapsedS = (performance.now() - this.t0) / 1000;
    const line = formatProgressLine(elapsedS, this.phase, now, this.previous);
    this.previous = now;
    // \x1b[K clears what a longer previous line left behind.
    this.out.write(this.out.isTTY === true ? `\r${line}\x1b[K` : `${line}\n`);
  }
}
