import { BadRequestException, Injectable, Logger } from '@nestjs/common';
import { LogThrottle } from '../worker-monitor/log-throttle';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { AuditPageDto, AuditQueryDto } from './dto/audit.dto';
import { SetThresholdDto } from './dto/set-threshold.dto';
import { ThresholdEntryDto, ThresholdPageDto } from '../thresholds/dto/threshold-entry.dto';
import { ThresholdPreconditionFailedError } from './errors/threshold-precondition-failed.error';
import {
  ThresholdChangeUnconfirmedError,
  ThresholdStoreUnavailableError,
} from './errors/threshold-store-unavailable.error';
import { etagOf, parseIfMatch } from './if-match';
import {
  AppliedChange,
  AuditMeta,
  ChangeOptions,
  ChangeOutcomeUnknownError,
  ThresholdPatch,
  ThresholdRepository,
  ThresholdValues,
  VersionMismatchError,
} from '../thresholds/persistence';
import { ThresholdSyncService } from '../thresholds/threshold-sync.service';
import { AnyThresholds, THRESHOLD_SPECS } from '../thresholds/busy-thresholds';
import { toWire } from '../thresholds/threshold-wire';
import { ThresholdsService } from '../thresholds/thresholds.service';

const DEFAULT_AUDIT_PAGE = 50;

/** The index of the first of the sorted `names` that sorts after `after`. */
function firstAbove(names: readonly string[], after: string): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (names[mid] <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
const AUDIT_FAILURE_LOG_INTERVAL_MS = 10000;

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** One model's entry and the ETag of the stored state it reflects. */
export interface ThresholdAnswer {
  entry: ThresholdEntryDto;
  etag: string;
}

/** docs/api.md#busy-thresholds: reads answer from memory; writes go to the database first, then apply. */
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

  private index: { version: string; names: string[] } | undefined;

  entry(model: string): ThresholdEntryDto {
    return { model, ...toWire(this.thresholds.effective(model)) };
  }

  /**
   * Up to `limit` entries of the models that have live workers or stored thresholds, in model
   * order, after the model `after`; `next` is the last model of the page when more follow.
   */
  page(after: string | undefined, limit: number): ThresholdPageDto {
    const models = this.models();
    const start = after === undefined ? 0 : firstAbove(models, after);
    const shown = models.slice(start, start + limit);
    const more = start + limit < models.length;
    return {
      thresholds: shown.map((m) => this.entry(m)),
      next: more ? shown[shown.length - 1] : null,
    };
  }

  /**
   * Every listed model, sorted. Sorted again only when a model joins or leaves the list, so a
   * page or the whole list costs what it returns, not a sort of every model (never mutated:
   * an answer being written keeps the array it started with).
   */
  models(): readonly string[] {
    const version = `${this.thresholds.overrideModelsVersion()}:${this.registry.servedModelsVersion()}`;
    if (this.index?.version !== version) {
      const names = new Set(this.thresholds.modelsWithOverrides());
      for (const name of this.registry.modelNames()) {
        if (this.registry.model(name)?.workers.size) names.add(name);
      }
      this.index = { version, names: [...names].sort() };
    }
    return this.index.names;
  }

  /** A read: the entry as this replica serves it, with the version it reflects. */
  read(model: string): ThresholdAnswer {
    return { entry: this.entry(model), etag: etagOf(this.sync.versionOf(model)) };
  }

  /**
   * `reveal`: the caller holds a valid admin token and may read the database's error text.
   * `ifMatch`: the request's If-Match header, checked by the store under the model's row lock.
   */
  async set(
    dto: SetThresholdDto,
    meta: AuditMeta,
    reveal = false,
    ifMatch?: string,
  ): Promise<ThresholdAnswer> {
    const patch = this.patchOf(dto);
    if (Object.keys(patch).length === 0) {
      if (dto.reason != null || dto.ttl_secs != null) {
        throw new BadRequestException(['reason and ttl_secs need a threshold key to change']);
      }
      return this.read(dto.model);
    }
    const options = { ifMatch: parseIfMatch(ifMatch), ttlSecs: dto.ttl_secs ?? undefined };
    const applied = await this.store(
      dto.model,
      patch,
      { ...meta, reason: dto.reason },
      reveal,
      options,
    );
    this.sync.applyLocal(dto.model, applied.after, applied.audit.id);
    const expiry = applied.audit.expiresAt ? `, reverts at ${applied.audit.expiresAt}` : '';
    this.logger.log(
      `thresholds of '${dto.model}' changed by ${meta.actor} from ${meta.source}: ` +
        `${this.show(applied.before)} -> ${this.show(applied.after)} (audit ${applied.audit.id}${expiry})`,
    );
    this.sync.announce(dto.model);
    return this.read(dto.model);
  }

  private async store(
    model: string,
    patch: ThresholdPatch,
    meta: AuditMeta,
    reveal: boolean,
    options: ChangeOptions,
  ): Promise<AppliedChange> {
    try {
      const applied = await this.repository.applyChange(model, patch, meta, options);
      this.sync.markStore(true);
      return applied;
    } catch (err) {
      if (err instanceof VersionMismatchError) {
        // The store told us its current state: serve it, so a read here gives the right ETag.
        this.sync.markStore(true);
        this.sync.applyLocal(model, err.current.values, err.current.version);
        throw new ThresholdPreconditionFailedError();
      }
      this.sync.markStore(false);
      if (err instanceof ChangeOutcomeUnknownError) {
        this.logger.error(
          `threshold change for '${model}' by ${meta.actor} unconfirmed (COMMIT sent, ` +
            `no answer: it may be stored; resyncing): ${describeError(err)}`,
        );
        // If it was stored, the resync applies it here (and the periodic one, on peers).
        void this.sync.resyncAll();
        throw new ThresholdChangeUnconfirmedError(describeError(err), reveal);
      }
      this.logger.error(
        `threshold change for '${model}' by ${meta.actor} failed: ${describeError(err)}`,
      );
      throw new ThresholdStoreUnavailableError(describeError(err), reveal);
    }
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
          reason: e.reason,
          expires_at: e.expiresAt,
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
