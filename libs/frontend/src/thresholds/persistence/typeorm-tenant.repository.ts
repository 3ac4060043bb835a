import { DataSource, EntityManager } from 'typeorm';
import { StoredTenant, TenantAuditEntity } from './entities/tenant-audit.entity';
import { TenantKeyEntity } from './entities/tenant-key.entity';
import { TenantEntity } from './entities/tenant.entity';
import {
  TenantAction,
  TenantAuditEntry,
  TenantAuditMeta,
  TenantAuditPage,
  TenantPage,
  TenantRecord,
  TenantRepository,
  TenantSettings,
} from './tenant.repository';

function recordOf(row: TenantEntity, keys: TenantKeyEntity[]): TenantRecord {
  return {
    id: row.id,
    weight: row.weight,
    requestsPerMinute: row.requestsPerMinute,
    tokensPerMinute: row.tokensPerMinute,
    maxConcurrency: row.maxConcurrency,
    priority: row.priority,
    keys: keys
      .map((k) => ({ keyId: k.keyId, keyHash: k.keyHash.trim(), createdAt: iso(k.createdAt) }))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.keyId.localeCompare(b.keyId)),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    version: row.lastAuditId ?? '0',
  };
}

const iso = (d: Date | string): string => new Date(d).toISOString();

function storedOf(r: TenantRecord | undefined): StoredTenant | null {
  if (!r) return null;
  return {
    weight: r.weight,
    requests_per_minute: r.requestsPerMinute,
    tokens_per_minute: r.tokensPerMinute,
    max_concurrency: r.maxConcurrency,
    priority: r.priority,
    key_ids: r.keys.map((k) => k.keyId),
  };
}

function entryOf(row: TenantAuditEntity): TenantAuditEntry {
  return {
    id: row.id,
    at: iso(row.at),
    actor: row.actor,
    tenant: row.tenant,
    action: row.action as TenantAction,
    before: row.before,
    after: row.after,
    source: row.source,
    reason: row.reason,
  };
}

/** The only class that reads and writes tenants; every query is parameterised. */
export class TypeOrmTenantRepository extends TenantRepository {
  constructor(private readonly dataSource: DataSource) {
    super();
  }

  async loadAll(): Promise<TenantRecord[]> {
    const em = this.dataSource.manager;
    const [rows, keys] = await Promise.all([
      em.getRepository(TenantEntity).find({ order: { id: 'ASC' } }),
      em.getRepository(TenantKeyEntity).find(),
    ]);
    const byTenant = new Map<string, TenantKeyEntity[]>();
    for (const k of keys) byTenant.set(k.tenantId, [...(byTenant.get(k.tenantId) ?? []), k]);
    return rows.map((r) => recordOf(r, byTenant.get(r.id) ?? []));
  }

  load(id: string): Promise<TenantRecord | undefined> {
    return this.read(this.dataSource.manager, id, false);
  }

  async page(limit: number, after?: string): Promise<TenantPage> {
    const qb = this.dataSource.manager
      .getRepository(TenantEntity)
      .createQueryBuilder('t')
      .orderBy('t.id', 'ASC')
      .limit(limit + 1);
    if (after !== undefined) qb.where('t.id > :after', { after });
    const rows = await qb.getMany();
    const shown = rows.slice(0, limit);
    const keys =
      shown.length === 0
        ? []
        : await this.dataSource.manager
            .getRepository(TenantKeyEntity)
            .createQueryBuilder('k')
            .where('k.tenantId IN (:...ids)', { ids: shown.map((r) => r.id) })
            .getMany();
    const tenants = shown.map((r) =>
      recordOf(
        r,
        keys.filter((k) => k.tenantId === r.id),
      ),
    );
    return { tenants, next: rows.length > limit ? shown[shown.length - 1].id : null };
  }

  put(
    id: string,
    settings: TenantSettings,
    meta: TenantAuditMeta,
  ): Promise<{ record: TenantRecord; created: boolean }> {
    return this.dataSource.transaction(async (em) => {
      const inserted = await em
        .createQueryBuilder()
        .insert()
        .into(TenantEntity)
        .values({ id })
        .orIgnore()
        .returning(['id'])
        .execute();
      const created = (inserted.raw as unknown[]).length > 0;
      const before = created ? undefined : await this.read(em, id, true);
      await em.getRepository(TenantEntity).update({ id }, { ...settings, updatedAt: new Date() });
      const after = (await this.read(em, id, false)) as TenantRecord;
      const auditId = await this.audit(em, id, 'put', before, after, meta);
      return { record: { ...after, version: auditId }, created };
    });
  }

  remove(id: string, meta: TenantAuditMeta): Promise<boolean> {
    return this.dataSource.transaction(async (em) => {
      const before = await this.read(em, id, true);
      if (!before) return false;
      await em.getRepository(TenantEntity).delete({ id });
      await this.audit(em, id, 'delete', before, undefined, meta);
      return true;
    });
  }

  addKey(
    id: string,
    keyId: string,
    keyHash: string,
    meta: TenantAuditMeta,
  ): Promise<TenantRecord | undefined> {
    return this.dataSource.transaction(async (em) => {
      const before = await this.read(em, id, true);
      if (!before) return undefined;
      await em.getRepository(TenantKeyEntity).insert({ keyId, tenantId: id, keyHash });
      return this.afterKeyChange(em, id, 'key_created', before, meta);
    });
  }

  removeKey(id: string, keyId: string, meta: TenantAuditMeta): Promise<boolean> {
    return this.dataSource.transaction(async (em) => {
      const before = await this.read(em, id, true);
      if (!before?.keys.some((k) => k.keyId === keyId)) return false;
      await em.getRepository(TenantKeyEntity).delete({ keyId, tenantId: id });
      await this.afterKeyChange(em, id, 'key_deleted', before, meta);
      return true;
    });
  }

  async listAudit(tenant: string, limit: number, before?: string): Promise<TenantAuditPage> {
    const qb = this.dataSource.manager
      .getRepository(TenantAuditEntity)
      .createQueryBuilder('a')
      .where('a.tenant = :tenant', { tenant })
      .orderBy('a.id', 'DESC')
      .limit(limit + 1);
    if (before !== undefined) qb.andWhere('a.id < :before', { before });
    const rows = await qb.getMany();
    const entries = rows.slice(0, limit).map(entryOf);
    return { entries, next: rows.length > limit ? entries[entries.length - 1].id : null };
  }

  private async afterKeyChange(
    em: EntityManager,
    id: string,
    action: TenantAction,
    before: TenantRecord,
    meta: TenantAuditMeta,
  ): Promise<TenantRecord> {
    await em.getRepository(TenantEntity).update({ id }, { updatedAt: new Date() });
    const after = (await this.read(em, id, false)) as TenantRecord;
    const auditId = await this.audit(em, id, action, before, after, meta);
    return { ...after, version: auditId };
  }

  /** With `lock`, holds the tenant's row until the transaction ends: its changes queue on it. */
  private async read(
    em: EntityManager,
    id: string,
    lock: boolean,
  ): Promise<TenantRecord | undefined> {
    const qb = em.getRepository(TenantEntity).createQueryBuilder('t').where('t.id = :id', { id });
    if (lock) qb.setLock('pessimistic_write');
    const row = await qb.getOne();
    if (!row) return undefined;
    const keys = await em.getRepository(TenantKeyEntity).find({ where: { tenantId: id } });
    return recordOf(row, keys);
  }

  /** The audit row, and the tenant's new version (its id) when the tenant still exists. */
  private async audit(
    em: EntityManager,
    tenant: string,
    action: TenantAction,
    before: TenantRecord | undefined,
    after: TenantRecord | undefined,
    meta: TenantAuditMeta,
  ): Promise<string> {
    const inserted = await em.getRepository(TenantAuditEntity).insert({
      actor: meta.actor,
      tenant,
      action,
      before: storedOf(before),
      after: storedOf(after),
      source: meta.source,
      requestId: meta.requestId,
      reason: meta.reason ?? null,
    });
    const auditId = String((inserted.identifiers[0] as { id: string | number }).id);
    if (after)
      await em.getRepository(TenantEntity).update({ id: tenant }, { lastAuditId: auditId });
    return auditId;
  }
}
