import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** A tenant as the audit log shows it; `null` where it does not exist (before a create). */
export interface StoredTenant {
  weight: number;
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
  max_concurrency: number | null;
  priority: string | null;
  key_ids: string[];
}

/** One row per change of a tenant or of its keys, written in the change's own transaction. */
@Entity({ name: 'tenant_audit' })
@Index('IDX_tenant_audit_tenant_id', ['tenant', 'id'])
export class TenantAuditEntity {
  @PrimaryGeneratedColumn('increment', {
    type: 'bigint',
    primaryKeyConstraintName: 'PK_tenant_audit',
  })
  id!: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  at!: Date;

  @Column({ type: 'varchar', length: 128 })
  actor!: string;

  @Column({ type: 'varchar', length: 64 })
  tenant!: string;

  /** `put`, `delete`, `key_created` or `key_deleted`. */
  @Column({ type: 'varchar', length: 32 })
  action!: string;

  @Column({ type: 'jsonb', nullable: true })
  before!: StoredTenant | null;

  @Column({ type: 'jsonb', nullable: true })
  after!: StoredTenant | null;

  @Column({ type: 'varchar', length: 128 })
  source!: string;

  @Column({ name: 'request_id', type: 'varchar', length: 128, nullable: true })
  requestId!: string | null;

  @Column({ type: 'varchar', length: 512, nullable: true })
  reason!: string | null;
}
