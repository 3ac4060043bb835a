import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { METRIC } from '../metrics/metric-names';
import { WorkerEntry } from './worker-entry';
import { RegistryObserver, WorkerRegistry } from './worker-registry.service';

/**
 * Where a worker stands with outlier ejection: in routing; ejected for a backoff; back in
 * routing for one probe request (`probe`); or out again while that probe runs (`probing`).
 */
export type EjectionPhase = 'in' | 'ejected' | 'probe' | 'probing';

/** A worker's ejection state, as the status page shows it. */
export interface EjectionView {
  readonly phase: EjectionPhase;
  /** Its requests that failed in a row (connect, reset, 5xx) since the last success. */
  readonly consecutiveFailures: number;
  /** Ejections in a row (without a successful probe in between): the backoff's exponent. */
  readonly ejections: number;
  /** `Date.now()` when the current backoff ends; null unless ejected. */
  readonly ejectedUntilMs: number | null;
}

interface EjectionState {
  phase: EjectionPhase;
  failures: number;
  ejections: number;
  untilMs: number | null;
  timer: NodeJS.Timeout | undefined;
}

const IN_ROUTING: EjectionView = {
  phase: 'in',
  consecutiveFailures: 0,
  ejections: 0,
  ejectedUntilMs: null,
};

/**
 * Outlier ejection (docs/decisions/0170-outlier-ejection.md): a worker whose requests fail
 * `--eject-after` times in a row (refused or cut connection, 5xx: what `UpstreamAttempts` tells
 * its observer) leaves routing for a backoff (`--eject-backoff-ms`, doubled on each ejection in
 * a row, at most `--eject-backoff-max-ms`), then comes back for one probe request: its success
 * puts the worker back in routing, its failure ejects it again for twice as long. Out of routing,
 * the worker's load reports keep its state current but do not count for the 503 decision.
 */
@Injectable()
export class OutlierEjection implements RegistryObserver, OnModuleDestroy {
  private readonly logger = new Logger('OutlierEjection');
  private readonly states = new WeakMap<WorkerEntry, EjectionState>();
  private readonly timed = new Set<EjectionState>();

  constructor(
    private readonly config: FrontendConfig,
    private readonly registry: WorkerRegistry,
    @InjectMetric(METRIC.workerEjections) private readonly ejected: Counter,
  ) {
    registry.observe(this);
  }

  onModuleDestroy(): void {
    for (const s of this.timed) clearTimeout(s.timer);
    this.timed.clear();
  }

  /** A request to the worker was answered below 500: its failures in a row start again. */
  succeeded(worker: WorkerEntry): void {
    const s = this.states.get(worker);
    if (!s) return;
    s.failures = 0;
    if (s.phase !== 'probing') return;
    this.logger.log(
      `worker ${worker.id} of model '${worker.model}' answered its probe: back in routing`,
    );
    s.phase = 'in';
    s.ejections = 0;
    this.registry.setInRouting(worker, true);
  }

  /** A request to the worker failed (refused or cut connection, 5xx). */
  failed(worker: WorkerEntry, reason: string): void {
    const n = this.config.ejectAfter;
    if (n === 0 || this.registry.worker(worker.id) !== worker) return;
    const s = this.stateOf(worker);
    s.failures++;
    if (s.phase === 'probing') this.eject(worker, s, `its probe failed (${reason})`);
    else if (s.phase === 'in' && s.failures >= n) {
      this.eject(worker, s, `${s.failures} requests failed in a row, the last: ${reason}`);
    }
  }

  /**
   * A request was leased on the worker: true when it is the probe (the worker then leaves routing
   * until its outcome, so that it gets no other request meanwhile).
   */
  leased(worker: WorkerEntry): boolean {
    const s = this.states.get(worker);
    if (s?.phase !== 'probe') return false;
    s.phase = 'probing';
    this.registry.setInRouting(worker, false);
    return true;
  }

  /**
   * The probe's lease ended. Without an outcome (its client left, it timed out, it never went
   * out) the worker waits for another probe request.
   */
  probeEnded(worker: WorkerEntry): void {
    const s = this.states.get(worker);
    if (s?.phase !== 'probing') return;
    s.phase = 'probe';
    this.registry.setInRouting(worker, true);
  }

  view(worker: WorkerEntry): EjectionView {
    const s = this.states.get(worker);
    if (!s) return IN_ROUTING;
    return {
      phase: s.phase,
      consecutiveFailures: s.failures,
      ejections: s.ejections,
      ejectedUntilMs: s.untilMs,
    };
  }

  workerRemoved(worker: WorkerEntry): void {
    const s = this.states.get(worker);
    if (s) this.stopTimer(s);
  }

  private stateOf(worker: WorkerEntry): EjectionState {
    let s = this.states.get(worker);
    if (!s) {
      s = { phase: 'in', failures: 0, ejections: 0, untilMs: null, timer: undefined };
      this.states.set(worker, s);
    }
    return s;
  }

  private eject(worker: WorkerEntry, s: EjectionState, why: string): void {
    const { ejectBackoffMs, ejectBackoffMaxMs } = this.config;
    s.ejections++;
    const backoffMs = Math.min(
      ejectBackoffMaxMs,
      ejectBackoffMs * 2 ** Math.min(s.ejections - 1, 30),
    );
    s.phase = 'ejected';
    s.untilMs = Date.now() + backoffMs;
    this.registry.setInRouting(worker, false);
    this.ejected.inc({ model: worker.model });
    this.logger.warn(
      `worker ${worker.id} of model '${worker.model}' ejected from routing for ${backoffMs} ms: ${why}`,
    );
    this.stopTimer(s);
    s.timer = setTimeout(() => {
      this.timed.delete(s);
      s.timer = undefined;
      s.untilMs = null;
      if (s.phase !== 'ejected' || this.registry.worker(worker.id) !== worker) return;
      s.phase = 'probe';
      this.registry.setInRouting(worker, true);
    }, backoffMs);
    s.timer.unref();
    this.timed.add(s);
  }

  private stopTimer(s: EjectionState): void {
    clearTimeout(s.timer);
    s.timer = undefined;
    this.timed.delete(s);
  }
}
