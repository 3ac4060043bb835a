import { Injectable, Logger } from '@nestjs/common';
import { LogThrottle } from '../worker-monitor/log-throttle';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { AuditPageDto, AuditQueryDto } from './dto/audit.dto';
import { SetThresholdDto } from './dto/set-threshold.dto';
import { ThresholdEntryDto } from '../thresholds/dto/threshold-entry.dto';
import {
  ThresholdChangeUnconfirmedError,
  ThresholdStoreUnavailableError,
} from './errors/threshold-store-unavailable.error';
import {
  AuditMeta,
  ChangeOutcomeUnknownError,
  ThresholdPatch,
  ThresholdRepository,
  ThresholdValues,
} from '../thresholds/persistence';
import { ThresholdSyncService } from '../thresholds/threshold-sync.service';
import { AnyThresholds, THRESHOLD_SPECS } from '../thresholds/busy-thresholds';
import { toWire } from '../thresholds/threshold-wire';
import { ThresholdsService } from '../thresholds/thresholds.service';

const DEFAULT_AUDIT_PAGE = 50;
const AUDIT_FAILURE_LOG_INTERVAL_MS = 10000;

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Contract §3.2: reads answer from memory; writes go to the database first, then apply. */
@Injectable()
export class ThresholdAdminService {
  private readonly logger = new Logger('Thresholds');
  private readonly auditFailures = new LogThrottle(
    (line) => this.logger.error(line),
    AUDIT_FAILURE_LOG_INTERVAL_MS,
    5,
    'failures',
  );

  constructor(
    private readonly thresholds: ThresholdsService,
    private readonly registry: WorkerRegistry,
    private readonly repository: ThresholdRepository,
    private readonly sync: ThresholdSyncService,
  ) {}

  entry(model: string): ThresholdEntryDto {
    return { model, ...toWire(this.thresholds.effective(model)) };
  }

  /** Every model that has live workers or stored thresholds. */
  list(): ThresholdEntryDto[] {
    const models = new Set(this.thresholds.modelsWithOverrides());
    for (const name of this.registry.modelNames()) {
      if (this.registry.model(name)?.workers.size) models.add(name);
    }
    return [...models].sort().map((m) => this.entry(m));
  }

  /** `reveal`: the caller holds a valid admin token and may read the database's error text. */
  async set(dto: SetThresholdDto, meta: AuditMeta, reveal = false): Promise<ThresholdEntryDto> {
    const patch = this.patchOf(dto);
    if (Object.keys(patch).length === 0) return this.entry(dto.model);
    let applied;
    try {
      applied = await this.repository.applyChange(dto.model, patch, meta);
      this.sync.markStore(true);
    } catch (err) {
      this.sync.markStore(false);
      if (err instanceof ChangeOutcomeUnknownError) {
        this.logger.error(
          `threshold change for '${dto.model}' by ${meta.actor} unconfirmed (COMMIT sent, ` +
            `no answer: it may be stored; resyncing): ${describeError(err)}`,
        );
        // If it was stored, the resync applies it here (and the periodic one, on peers).
        void this.sync.resyncAll();
        throw new ThresholdChangeUnconfirmedError(describeError(err), reveal);
      }
      this.logger.error(
        `threshold change for '${dto.model}' by ${meta.actor} failed: ${describeError(err)}`,
      );
      throw new ThresholdStoreUnavailableError(describeError(err), reveal);
    }
    this.sync.applyLocal(dto.model, applied.after, applied.audit.id);
    this.logger.log(
      `thresholds of '${dto.model}' changed by ${meta.actor} from ${meta.source}: ` +
        `${this.show(applied.before)} -> ${this.show(applied.after)} (audit ${applied.audit.id})`,
    );
    this.sync.announce(dto.model);
    return this.entry(dto.model);
  }

  async audit(query: AuditQueryDto, reveal = false): Promise<AuditPageDto> {
    try {
      const page = await this.repository.listAudit({
        model: query.model,
        limit: query.limit ?? DEFAULT_AUDIT_PAGE,
        before: query.before,
      });
      return {
        entries: page.entries.map((e) => ({
          id: e.id,
          at: e.at,
          actor: e.actor,
          model: e.model,
          before: e.before,
          after: e.after,
          source: e.source,
        })),
        next: page.next,
      };
    } catch (err) {
      // Open to anyone: a flood of reads during an outage must not flood the log.
      this.auditFailures.line(
        'audit',
        `threshold audit read failed: ${describeError(err)}`,
        Date.now(),
      );
      throw new ThresholdStoreUnavailableError(describeError(err), reveal);
    }
  }

  private patchOf(dto: SetThresholdDto): ThresholdPatch {
    const patch: Partial<AnyThresholds> = {};
    for (const { wire, key } of THRESHOLD_SPECS) {
      const value = dto[wire];
      if (value !== undefined) patch[key] = value;
    }
    return patch as ThresholdPatch;
  }

  private show(v: ThresholdValues): string {
    return JSON.stringify(toWire(v));
  }
}
