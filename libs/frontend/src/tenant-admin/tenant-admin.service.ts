import { Injectable, Logger, NotFoundException } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { TenantAuditMeta, TenantRecord, TenantRepository } from '../thresholds/persistence';
import { ThresholdStoreUnavailableError } from '../threshold-admin/errors/threshold-store-unavailable.error';
import { keyDigest } from '../tenants/tenant-directory.service';
import { TenantSyncService } from '../tenants/tenant-sync.service';
import {
  NewKeyDto,
  TenantAuditPageDto,
  TenantDto,
  TenantListDto,
  TenantUsageDto,
} from './dto/tenant.dto';
import { TenantLimits } from '../tenants/tenant-limits.service';
import { TenantDirectory } from '../tenants/tenant-directory.service';
import { TenantSettings } from '../thresholds/persistence';

export const KEY_PREFIX = 'sk-sluice-';

function dtoOf(r: TenantRecord): TenantDto {
  return {
    id: r.id,
    weight: r.weight,
    requests_per_minute: r.requestsPerMinute,
    tokens_per_minute: r.tokensPerMinute,
    max_concurrency: r.maxConcurrency,
    priority: r.priority,
    keys: r.keys.map((k) => ({ key_id: k.keyId, created_at: k.createdAt })),
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

const noTenant = (id: string) => new NotFoundException(`No tenant '${id}'`);

/**
 * `/tenants` (docs/api.md#tenants): every read and write goes to the database; a write is applied
 * here at once and announced to the other replicas.
 */
@Injectable()
export class TenantAdminService {
  private readonly logger = new Logger('Tenants');

  constructor(
    private readonly repository: TenantRepository,
    private readonly sync: TenantSyncService,
    private readonly limits: TenantLimits,
    private readonly directory: TenantDirectory,
  ) {}

  /** From this replica's memory: a tenant it does not hold (yet) is a 404. */
  usage(id: string, minutes: number): Promise<TenantUsageDto> {
    if (!this.directory.get(id)) return Promise.reject(noTenant(id));
    const window = minutes % 60 === 0 ? `${minutes / 60}h` : `${minutes}m`;
    return Promise.resolve({ tenant: id, window, ...this.limits.report(id, minutes) });
  }

  async list(limit: number, after: string | undefined): Promise<TenantListDto> {
    const page = await this.store(() => this.repository.page(limit, after));
    return { tenants: page.tenants.map(dtoOf), next: page.next };
  }

  async get(id: string): Promise<TenantDto> {
    const record = await this.store(() => this.repository.load(id));
    if (!record) throw noTenant(id);
    return dtoOf(record);
  }

  async put(
    id: string,
    settings: TenantSettings,
    meta: TenantAuditMeta,
  ): Promise<{ tenant: TenantDto; created: boolean }> {
    const { record, created } = await this.store(() => this.repository.put(id, settings, meta));
    await this.applied(id, `${created ? 'created' : 'changed'}`, meta);
    return { tenant: dtoOf(record), created };
  }

  async remove(id: string, meta: TenantAuditMeta): Promise<void> {
    if (!(await this.store(() => this.repository.remove(id, meta)))) throw noTenant(id);
    await this.applied(id, 'deleted', meta);
  }

  async addKey(id: string, meta: TenantAuditMeta): Promise<NewKeyDto> {
    const key = KEY_PREFIX + randomBytes(24).toString('base64url');
    const keyId = randomBytes(8).toString('hex');
    const record = await this.store(() => this.repository.addKey(id, keyId, keyDigest(key), meta));
    if (!record) throw noTenant(id);
    await this.applied(id, `given key ${keyId}`, meta);
    return { key, key_id: keyId };
  }

  async removeKey(id: string, keyId: string, meta: TenantAuditMeta): Promise<void> {
    if (!(await this.store(() => this.repository.removeKey(id, keyId, meta)))) {
      throw new NotFoundException(`Tenant '${id}' has no key '${keyId}'`);
    }
    await this.applied(id, `lost key ${keyId}`, meta);
  }

  async audit(id: string, limit: number, before?: string): Promise<TenantAuditPageDto> {
    const page = await this.store(() => this.repository.listAudit(id, limit, before));
    return { entries: page.entries, next: page.next };
  }

  /** Applies the stored state here now (not at the next resync) and tells the other replicas. */
  private async applied(id: string, what: string, meta: TenantAuditMeta): Promise<void> {
    this.logger.log(`tenant '${id}' ${what} by ${meta.actor} from ${meta.source}`);
    await this.sync.reload(id);
    this.sync.announce(id);
  }

  private async store<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.logger.error(`tenant store failed: ${reason}`);
      throw new ThresholdStoreUnavailableError(reason, false);
    }
  }
}
