import { Injectable } from '@nestjs/common';
import { perClass, PRIORITY_CLASSES, PriorityClass } from '../config/priority';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { WorkerEntry } from '../worker-monitor/worker-entry';
import { RegistryObserver, WorkerRegistry } from '../worker-monitor/worker-registry.service';

/**
 * The models whose requests are refused now, per priority class: every live worker busy for the
 * class and the model's admission mode `token-capacity` (a `shadow` or `none` model is never
 * refused). Kept in step with the registry and with threshold changes, so that "could a request
 * of this class be refused now?" costs one size check. Only a hint: while it is empty, requests
 * take the ordinary path, which decides the same.
 */
@Injectable()
export class BusyModels implements RegistryObserver {
  private readonly names = perClass(() => new Set<string>());

  constructor(
    private readonly registry: WorkerRegistry,
    private readonly thresholds: ThresholdsService,
  ) {
    registry.observe(this);
    // After the registry's own listener (it was built first), so busy states are current.
    thresholds.onChange((model) => {
      for (const name of model === null ? registry.modelNames() : [model]) {
        for (const c of PRIORITY_CLASSES) this.check(name, c);
      }
    });
  }

  /** Some model refuses requests of some class. */
  get any(): boolean {
    const n = this.names;
    return n.sheddable.size > 0 || n.standard.size > 0 || n.critical.size > 0;
  }

  /** Some model refuses requests of this class. */
  anyFor(c: PriorityClass): boolean {
    return this.names[c].size > 0;
  }

  busyChanged(worker: WorkerEntry, c: PriorityClass): void {
    this.check(worker.model, c);
  }

  /** A worker that joins a busy model frees it; it is only seen through its first report. */
  rankUpdated(worker: WorkerEntry): void {
    for (const c of PRIORITY_CLASSES) {
      if (this.names[c].has(worker.model)) this.check(worker.model, c);
    }
  }

  /** The last free worker of a model can go without any busy change. */
  workerRemoved(worker: WorkerEntry): void {
    for (const c of PRIORITY_CLASSES) this.check(worker.model, c);
  }

  /** An ejected worker's load stops counting, and counts again when it is back. */
  routingChanged(worker: WorkerEntry): void {
    for (const c of PRIORITY_CLASSES) this.check(worker.model, c);
  }

  modelForgotten(name: string): void {
    for (const c of PRIORITY_CLASSES) this.names[c].delete(name);
  }

  private check(model: string, c: PriorityClass): void {
    const refused =
      this.registry.model(model)?.allBusyFor(c) === true &&
      this.thresholds.admissionControl(model) === 'token-capacity';
    if (refused) this.names[c].add(model);
    else this.names[c].delete(model);
  }
}
