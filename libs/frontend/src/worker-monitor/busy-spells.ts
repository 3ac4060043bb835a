import { Injectable } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { WorkerEntry } from './worker-entry';
import { RegistryObserver, WorkerRegistry } from './worker-registry.service';
import { PriorityClass } from '../config/priority';

/**
 * Weight of the newest spell in the mean: the estimate follows a change of load within a few
 * spells (half the weight is in the last two) without jumping with each one.
 */
export const SPELL_WEIGHT = 0.3;

/** What one model's workers have shown of their busy spells. */
interface ModelSpells {
  /** Mean length of the spells that ended (exponentially weighted), ms; none before the first. */
  meanMs: number | undefined;
  /** Workers busy now, with when their spell began; a Map keeps them oldest first. */
  readonly ongoing: Map<WorkerEntry, number>;
}

/**
 * How long a model's workers stay busy, for `--retry-after-secs auto` (docs/operations.md#rolling-out-shedding). A spell is
 * the time from a worker turning busy (every rank busy) to its turning free; a spell ends only
 * by the worker turning free (one that is removed while busy is forgotten). Per model the
 * lengths of the spells that ended are averaged with weight SPELL_WEIGHT for the newest.
 *
 * A rejection happens while every worker of the model is busy. The worker busy the longest is
 * the one expected to be free first, after mean − (time its spell has lasted); so the estimate
 * of when *a* worker will be free is that, and 0 once it is overdue. Observes the registry only
 * in that mode; otherwise it holds nothing.
 */
@Injectable()
export class BusySpells implements RegistryObserver {
  private readonly models = new Map<string, ModelSpells>();

  constructor(
    config: FrontendConfig,
    private readonly registry: WorkerRegistry,
  ) {
    if (config.retryAfterSecs === 'auto') registry.observe(this);
  }

  busyChanged(worker: WorkerEntry, c: PriorityClass): void {
    // docs/architecture.md#busy-rule's busy state is the standard class's.
    if (c !== 'standard') return;
    const now = Date.now();
    let spells = this.models.get(worker.model);
    if (!spells) {
      spells = { meanMs: undefined, ongoing: new Map() };
      this.models.set(worker.model, spells);
    }
    if (worker.busy) {
      spells.ongoing.set(worker, now);
      return;
    }
    const began = spells.ongoing.get(worker);
    if (began === undefined) return;
    spells.ongoing.delete(worker);
    const length = Math.max(0, now - began);
    spells.meanMs =
      spells.meanMs === undefined
        ? length
        : spells.meanMs + SPELL_WEIGHT * (length - spells.meanMs);
  }

  workerRemoved(worker: WorkerEntry): void {
    this.models.get(worker.model)?.ongoing.delete(worker);
  }

  modelForgotten(name: string): void {
    this.models.delete(name);
  }

  /** Mean length of the model's busy spells that ended, ms; undefined before the first. */
  meanMs(model: string): number | undefined {
    return this.models.get(model)?.meanMs;
  }

  /**
   * How long until a worker of `model` is expected to be free, ms: 0 when one is free now (or
   * the oldest spell is overdue); undefined before any spell of the model has ended.
   */
  expectedWaitMs(model: string, nowMs: number): number | undefined {
    const spells = this.models.get(model);
    if (spells?.meanMs === undefined) return undefined;
    if (!this.registry.model(model)?.allBusy) return 0;
    const oldest = spells.ongoing.values().next();
    if (oldest.done) return 0;
    return Math.max(0, spells.meanMs - (nowMs - oldest.value));
  }
}
