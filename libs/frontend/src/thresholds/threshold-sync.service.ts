import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventPublisher } from '@sluice/bus';
import { BUSY_THRESHOLD_CHANGED_EVENT, subjectFor } from '@sluice/contracts';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { randomUUID } from 'node:crypto';
import { Gauge } from 'prom-client';
import { METRIC } from '../metrics/metric-names';
import { FrontendConfig } from '../config/frontend-config';
import { noThresholds, sameThresholds } from './busy-thresholds';
import { NO_VERSION, ThresholdRepository, ThresholdValues } from './persistence';
import { isModelName } from './dto/storable-text';
import { ThresholdDatabase } from './persistence/threshold-database.service';
import { ThresholdsService } from './thresholds.service';

/**
 * Keeps this replica's thresholds equal to the database: a load at start (retried with backoff),
 * a NATS notification from the replica that made a change, and a periodic full resync as the
 * safety net for a lost notification.
 */
@Injectable()
export class ThresholdSyncService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Thresholds');
  private readonly origin = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private resyncing = false;
  private stopped = false;
  private loaded = false;
  /**
   * Version (audit id of the newest change) of each model as applied here, so that an older
   * answer that arrives late never wins; it is also the model's ETag. Models the store has a
   * row for, values or not.
   */
  private readonly versions = new Map<string, bigint>();

  constructor(
    private readonly config: FrontendConfig,
    private readonly thresholds: ThresholdsService,
    private readonly repository: ThresholdRepository,
    private readonly database: ThresholdDatabase,
    @InjectMetric(METRIC.thresholdStoreUp) private readonly storeUp: Gauge,
    private readonly publisher: EventPublisher,
  ) {}

  /** The stored thresholds have been loaded at least once (readiness, docs/api.md#errors). */
  get loadedOnce(): boolean {
    return this.loaded;
  }

  /** Every database access reports here, so the gauge follows the store between resyncs. */
  markStore(up: boolean): void {
    this.storeUp.set(up ? 1 : 0);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.database.ready((attempt, delayMs, reason) =>
      this.logger.warn(
        `waiting for the threshold database (attempt ${attempt}, retry in ${delayMs} ms): ${reason}`,
      ),
    );
    await this.resyncAll();
    this.logger.log(
      `loaded stored thresholds of ${this.thresholds.modelsWithOverrides().length} model(s)`,
    );
    this.timer = setInterval(() => void this.resyncAll(), this.config.thresholdResyncMs);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** The version of `model` whose values this replica serves (`NO_VERSION`: never changed). */
  versionOf(model: string): string {
    return (this.versions.get(model) ?? BigInt(NO_VERSION)).toString();
  }

  /** Applies a stored state read or written here, unless a newer one already is. */
  applyLocal(model: string, values: ThresholdValues, version: string): void {
    const id = BigInt(version);
    const last = this.versions.get(model);
    if (last !== undefined && last > id) return;
    this.versions.set(model, id);
    if (!sameThresholds(this.thresholds.override(model), values)) {
      this.thresholds.setOverride(model, noThresholds(values) ? undefined : values);
    }
  }

  announce(model: string): void {
    try {
      this.publisher.publish(subjectFor(this.config.namespace, BUSY_THRESHOLD_CHANGED_EVENT), {
        model,
        origin: this.origin,
      });
    } catch (err) {
      // The change is stored; peers pick it up at their next resync.
      this.logger.warn(`could not announce the change of '${model}': ${String(err)}`);
    }
  }

  /**
   * Another replica changed `model`: read the committed values and apply them now. Anyone on
   * NATS can publish this; a name no replica could have stored costs no database query.
   */
  async onPeerChange(payload: unknown): Promise<void> {
    const p = payload as { model?: unknown; origin?: unknown } | undefined;
    if (!isModelName(p?.model) || p.origin === this.origin) return;
    try {
      const state = await this.repository.loadState(p.model);
      if (state) this.applyLocal(p.model, state.values, state.version);
      else this.forget(p.model);
    } catch (err) {
      this.logger.warn(
        `could not reload thresholds of '${p.model}': ${String(err)} (resync will retry)`,
      );
    }
  }

  async resyncAll(): Promise<void> {
    if (this.resyncing || this.stopped) return;
    this.resyncing = true;
    try {
      const stored = await this.repository.loadStates();
      const known = [...this.thresholds.modelsWithOverrides(), ...this.versions.keys()];
      for (const model of known) {
        if (!stored.has(model)) this.forget(model);
      }
      for (const [model, { values, version }] of stored) this.applyLocal(model, values, version);
      this.markStore(true);
      this.loaded = true;
    } catch (err) {
      this.markStore(false);
      this.logger.warn(`threshold resync failed, keeping the last loaded values: ${String(err)}`);
    } finally {
      this.resyncing = false;
    }
  }

  /** The store has no row for `model` (any more): nothing per-model applies. */
  private forget(model: string): void {
    this.versions.delete(model);
    if (this.thresholds.override(model)) this.thresholds.setOverride(model, undefined);
  }
}
