import { Injectable } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { METRIC } from '../metrics/metric-names';
import { WorkerEntry } from './worker-entry';
import { RegistryObserver, WorkerRegistry } from './worker-registry.service';
import { PriorityClass } from '../config/priority';

/**
 * `sluice_frontend_worker_busy_transitions_total{model}`: every time a worker turns busy or
 * free, so flapping (and what hysteresis and dwell do to it) shows as a rate. A model's series
 * starts at 0 with its first report, so that `rate()` sees its first transition, and goes when
 * the model is forgotten.
 */
@Injectable()
export class BusyTransitionsCounter implements RegistryObserver {
  private readonly known = new Set<string>();

  constructor(
    registry: WorkerRegistry,
    @InjectMetric(METRIC.busyTransitions) private readonly counter: Counter,
  ) {
    registry.observe(this);
  }

  rankUpdated(worker: WorkerEntry): void {
    if (this.known.has(worker.model)) return;
    this.known.add(worker.model);
    this.counter.inc({ model: worker.model }, 0);
  }

  busyChanged(worker: WorkerEntry, c: PriorityClass): void {
    // docs/architecture.md#busy-rule's busy state is the standard class's.
    if (c !== 'standard') return;
    this.counter.inc({ model: worker.model });
  }

  modelForgotten(name: string): void {
    this.known.delete(name);
    this.counter.remove({ model: name });
  }
}
