import { Check, Column, Entity, PrimaryColumn, ValueTransformer } from 'typeorm';

/** pg returns int8 as a string; the limits are validated far below 2^53. */
const int8AsNumber: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

/** A tenant (docs/api.md#tenants): its weight and limits; `null` = no limit. */
@Entity({ name: 'tenants' })
@Check('CHK_tenants_weight', `"weight" > 0 AND "weight" <= 1000000`)
@Check('CHK_tenants_rpm', `"requests_per_minute" >= 1`)
@Check('CHK_tenants_tpm', `"tokens_per_minute" >= 1`)
@Check('CHK_tenants_concurrency', `"max_concurrency" >= 1`)
@Check('CHK_tenants_priority', `"priority" IN ('critical', 'standard', 'sheddable')`)
export class TenantEntity {
  @PrimaryColumn({ type: 'varchar', length: 64, primaryKeyConstraintName: 'PK_tenants' })
  id!: string;

  @Column({ type: 'double precision', default: 1 })
  weight!: number;

  @Column({
    name: 'requests_per_minute',
    type: 'bigint',
    nullable: true,
    transformer: int8AsNumber,
  })
  requestsPerMinute!: number | null;

  @Column({ name: 'tokens_per_minute', type: 'bigint', nullable: true, transformer: int8AsNumber })
  tokensPerMinute!: number | null;

  @Column({ name: 'max_concurrency', type: 'integer', nullable: true })
  maxConcurrency!: number | null;

  @Column({ type: 'varchar', length: 16, nullable: true })
  priority!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;

  /** Id of the audit row of the newest change: the tenant's version. */
  @Column({ name: 'last_audit_id', type: 'bigint', nullable: true })
  lastAuditId!: string | null;
}
