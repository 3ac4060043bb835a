import { Injectable } from '@nestjs/common';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { WorkerEntry } from '../worker-monitor/worker-entry';
import { RegistryObserver, WorkerRegistry } from '../worker-monitor/worker-registry.service';

/**
 * The models whose requests are refused now: every live worker busy and the model's admission
 * mode `token-capacity` (a `shadow` or `none` model is never refused). Kept in step with the
 * registry and with threshold changes, so that "could any request be refused now?" costs one
 * size check. Only a hint: while it is empty, requests take the ordinary path, which decides the
 * same.
 */
@Injectable()
export class BusyModels implements RegistryObserver {
  private readonly names = new Set<string>();

  constructor(
    private readonly registry: WorkerRegistry,
    private readonly thresholds: ThresholdsService,
  ) {
    registry.observe(this);
    // After the registry's own listener (it was built first), so busy states are current.
    thresholds.onChange((model) => {
      for (const name of model === null ? registry.modelNames() : [model]) this.check(name);
    });
  }

  get any(): boolean {
    return this.names.size > 0;
  }

  busyChanged(worker: WorkerEntry): void {
    this.check(worker.model);
  }

  /** A worker that joins a busy model frees it; it is only seen through its first report. */
  rankUpdated(worker: WorkerEntry): void {
    if (this.names.has(worker.model)) this.check(worker.model);
  }

  /** The last free worker of a model can go without any busy change. */
  workerRemoved(worker: WorkerEntry): void {
    this.check(worker.model);
  }

  modelForgotten(name: string): void {
    this.names.delete(name);
  }

  private check(model: string): void {
    const refused =
      this.registry.model(model)?.allBusy === true &&
      this.thresholds.admissionControl(model) === 'token-capacity';
    if (refused) this.names.add(model);
    else this.names.delete(model);
  }
}
