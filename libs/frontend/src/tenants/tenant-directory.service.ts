import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { TenantRecord } from '../thresholds/persistence';

/** The tenant of a request without a key or header (docs/api.md#tenants). */
export const DEFAULT_TENANT = 'default';

/** A tenant id: what `PUT /tenants/{id}` accepts and the trusted header may name. */
export const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** SHA-256 of an API key, hex: how keys are stored and looked up. */
export function keyDigest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Keys looked up remembered at most (decision 0194); the memo starts over when full. */
export const KEY_MEMO_MAX = 4096;

/**
 * This replica's copy of the stored tenants and their keys' digests, kept equal to the database
 * by `TenantSyncService`. Admission reads it on every request, never the database.
 */
@Injectable()
export class TenantDirectory {
  private readonly tenants = new Map<string, TenantRecord>();
  private readonly byDigest = new Map<string, string>();
  private readonly versions = new Map<string, bigint>();
  /**
   * Keys already looked up → their tenant (null: none), so a key costs its SHA-256 once and the
   * early refusal paths resolve the tenant with a map lookup (decision 0194). Bounded, and
   * emptied whenever a tenant or key changes.
   */
  private readonly memo = new Map<string, string | null>();

  get(id: string): TenantRecord | undefined {
    return this.tenants.get(id);
  }

  /** The id of the tenant holding this key, if any. */
  tenantOfKey(key: string): string | undefined {
    const known = this.memo.get(key);
    if (known !== undefined) return known ?? undefined;
    const found = this.byDigest.get(keyDigest(key));
    if (this.memo.size >= KEY_MEMO_MAX) this.memo.clear();
    this.memo.set(key, found ?? null);
    return found;
  }

  ids(): string[] {
    return [...this.tenants.keys()].sort();
  }

  get size(): number {
    return this.tenants.size;
  }

  /** Applies a stored state, unless a newer one of the tenant already is. */
  apply(record: TenantRecord): void {
    const version = BigInt(record.version);
    const last = this.versions.get(record.id);
    if (last !== undefined && last > version) return;
    this.versions.set(record.id, version);
    this.memo.clear();
    this.dropKeys(record.id);
    this.tenants.set(record.id, record);
    for (const k of record.keys) this.byDigest.set(k.keyHash, record.id);
  }

  /** The store has no such tenant (any more). */
  forget(id: string): void {
    this.memo.clear();
    this.dropKeys(id);
    this.tenants.delete(id);
    this.versions.delete(id);
  }

  private dropKeys(id: string): void {
    for (const k of this.tenants.get(id)?.keys ?? []) {
      if (this.byDigest.get(k.keyHash) === id) this.byDigest.delete(k.keyHash);
    }
  }
}
