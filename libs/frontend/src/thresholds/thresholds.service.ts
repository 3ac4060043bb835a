import { Injectable } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { PriorityFactors } from '../config/priority';
import { AdmissionControl } from '../config/threshold-keys';
import {
  admissionControlOf,
  AnyThresholds,
  BusyThresholds,
  THRESHOLD_KEYS,
  ThresholdOverride,
} from './busy-thresholds';
import { ClassThresholds, classThresholds } from './class-thresholds';

type Listener = (model: string | null) => void;

/**
 * The per-model values in force (thresholds and admission mode): a per-model override where
 * one is stored, else the global flag. Resolved objects are cached so the hot path is one map lookup; listeners hear
 * of every change (model name, or null for "all models") and re-evaluate busy state at once.
 */
@Injectable()
export class ThresholdsService {
  private readonly global: BusyThresholds;
  private overrides = new Map<string, ThresholdOverride>();
  private keysVersion = 0;
  private readonly resolved = new Map<string, BusyThresholds>();
  private readonly resolvedByClass = new Map<string, ClassThresholds>();
  private readonly factors: PriorityFactors;
  private readonly listeners: Listener[] = [];

  constructor(config: FrontendConfig) {
    this.global = { ...config.thresholds };
    this.factors = config.priorityFactors;
  }

  globalThresholds(): BusyThresholds {
    return this.global;
  }

  effective(model: string): BusyThresholds {
    const cached = this.resolved.get(model);
    if (cached) return cached;
    const override = this.overrides.get(model);
    const value = override ? this.merge(override) : this.global;
    this.resolved.set(model, value);
    return value;
  }

  /** What each priority class is judged with (docs/security.md#priority-classes-who-may-set-x-sluice-priority): `effective` × the class's factor. */
  byClass(model: string): ClassThresholds {
    const cached = this.resolvedByClass.get(model);
    if (cached) return cached;
    const value = classThresholds(this.effective(model), this.factors);
    this.resolvedByClass.set(model, value);
    return value;
  }

  /** How the busy rule applies to the model's requests: its own mode, else the global flag. */
  admissionControl(model: string): AdmissionControl {
    return admissionControlOf(this.effective(model));
  }

  override(model: string): ThresholdOverride | undefined {
    return this.overrides.get(model);
  }

  /** Changes whenever a model gains or loses its stored values (not when they change). */
  overrideModelsVersion(): number {
    return this.keysVersion;
  }

  modelsWithOverrides(): string[] {
    return [...this.overrides.keys()];
  }

  /** Replaces every stored override (e.g. after loading them from the database). */
  replaceOverrides(next: Map<string, ThresholdOverride>): void {
    const changed = new Set([...this.overrides.keys(), ...next.keys()]);
    if (changed.size !== this.overrides.size || changed.size !== next.size) this.keysVersion++;
    this.overrides = next;
    for (const model of changed) this.forget(model);
    for (const model of changed) this.notify(model);
  }

  setOverride(model: string, override: ThresholdOverride | undefined): void {
    if (this.overrides.has(model) !== (override !== undefined)) this.keysVersion++;
    if (override === undefined) this.overrides.delete(model);
    else this.overrides.set(model, override);
    this.forget(model);
    this.notify(model);
  }

  onChange(listener: Listener): void {
    this.listeners.push(listener);
  }

  private forget(model: string): void {
    this.resolved.delete(model);
    this.resolvedByClass.delete(model);
  }

  private merge(override: ThresholdOverride): BusyThresholds {
    const out: AnyThresholds = { ...this.global };
    for (const key of THRESHOLD_KEYS) {
      const v = override[key];
      if (v !== undefined && v !== null) out[key] = v;
    }
    return out as BusyThresholds;
  }

  private notify(model: string | null): void {
    for (const listener of this.listeners) listener(model);
  }
}
