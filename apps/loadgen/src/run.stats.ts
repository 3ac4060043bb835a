import { RequestOutcome } from './response.classifier';

/** Running totals; the progress line diffs two of these to show the last second. */
export interface RunCounters {
  sent: number;
  ok: number;
  rejected: number;
  other: number;
  dropped: number;
  aborted: number;
}

/** Everything the run observed; every sent request ends as ok, rejected, other or aborted. */
export class RunStats {
  arrivals = 0;
  readonly counters: RunCounters = {
    sent: 0,
    ok: 0,
    rejected: 0,
    other: 0,
    dropped: 0,
    aborted: 0,
  };
  /** Count per error label (`http_500`, `ECONNREFUSED`, `stream_truncated`, ...). */
  readonly otherKinds = new Map<string, number>();
  readonly okLatenciesMs: number[] = [];
  readonly okTtftsMs: number[] = [];
  readonly rejectedLatenciesMs: number[] = [];
  connectFailures = 0;
  outputTokens = 0;
  maxScheduleLagMs = 0;

  get inflight(): number {
    const c = this.counters;
    return c.sent - c.ok - c.rejected - c.other - c.aborted;
  }

  arrival(lagMs: number): void {
    this.arrivals += 1;
    if (lagMs > this.maxScheduleLagMs) this.maxScheduleLagMs = lagMs;
  }

  dropped(): void {
    this.counters.dropped += 1;
  }

  sent(): void {
    this.counters.sent += 1;
  }

  settled(outcome: RequestOutcome): void {
    switch (outcome.kind) {
      case 'ok':
        this.counters.ok += 1;
        this.okLatenciesMs.push(outcome.latencyMs);
        this.okTtftsMs.push(outcome.ttftMs);
        this.outputTokens += outcome.outputTokens;
        return;
      case 'rejected':
        this.counters.rejected += 1;
        this.rejectedLatenciesMs.push(outcome.latencyMs);
        return;
      case 'error':
        this.counters.other += 1;
        this.otherKinds.set(outcome.label, (this.otherKinds.get(outcome.label) ?? 0) + 1);
        if (outcome.connectFailure) this.connectFailures += 1;
        return;
      case 'aborted':
        this.counters.aborted += 1;
        return;
    }
  }

  snapshot(): RunCounters {
    return { ...this.counters };
  }
}
