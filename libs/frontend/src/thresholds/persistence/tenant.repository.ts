import { StoredTenant } from './entities/tenant-audit.entity';

export type { StoredTenant } from './entities/tenant-audit.entity';

/** What an admin sets on a tenant (docs/api.md#tenants); `null` = no limit. */
export interface TenantSettings {
  weight: number;
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  maxConcurrency: number | null;
  /** The highest priority class the tenant may ask for; null = any. */
  priority: string | null;
}

export interface TenantKey {
  keyId: string;
  /** SHA-256 of the key, hex: all the store ever holds of it. */
  keyHash: string;
  /** ISO-8601. */
  createdAt: string;
}

export interface TenantRecord extends TenantSettings {
  id: string;
  keys: TenantKey[];
  createdAt: string;
  updatedAt: string;
  /** Id of the audit row of the newest change (`0` if none): newer states have larger ones. */
  version: string;
}

/** Who made a change, from where and why; written to the audit row. */
export interface TenantAuditMeta {
  actor: string;
  source: string;
  requestId: string | null;
  reason?: string | null;
}

export type TenantAction = 'put' | 'delete' | 'key_created' | 'key_deleted';

export interface TenantAuditEntry {
  id: string;
  at: string;
  actor: string;
  tenant: string;
  action: TenantAction;
  before: StoredTenant | null;
  after: StoredTenant | null;
  source: string;
  reason: string | null;
}

export interface TenantPage {
  tenants: TenantRecord[];
  /** The id to pass as `after` for the next page; null when there is none. */
  next: string | null;
}

export interface TenantAuditPage {
  entries: TenantAuditEntry[];
  next: string | null;
}

/** The port for tenants: services depend on this abstract class, never on TypeORM. */
export abstract class TenantRepository {
  abstract loadAll(): Promise<TenantRecord[]>;

  abstract load(id: string): Promise<TenantRecord | undefined>;

  /** Ordered by id; `after` is the last id of the previous page. */
  abstract page(limit: number, after?: string): Promise<TenantPage>;

  /** Creates or replaces the tenant's settings with its audit row, in one transaction. */
  abstract put(
    id: string,
    settings: TenantSettings,
    meta: TenantAuditMeta,
  ): Promise<{ record: TenantRecord; created: boolean }>;

  /** Deletes the tenant and its keys, audited; false when there was no such tenant. */
  abstract remove(id: string, meta: TenantAuditMeta): Promise<boolean>;

  /** Stores a key's digest, audited; undefined when there is no such tenant. */
  abstract addKey(
    id: string,
    keyId: string,
    keyHash: string,
    meta: TenantAuditMeta,
  ): Promise<TenantRecord | undefined>;

  /** Deletes a key, audited; false when the tenant has no such key. */
  abstract removeKey(id: string, keyId: string, meta: TenantAuditMeta): Promise<boolean>;

  /** Newest first; `before` is the `next` of the previous page. */
  abstract listAudit(tenant: string, limit: number, before?: string): Promise<TenantAuditPage>;
}
