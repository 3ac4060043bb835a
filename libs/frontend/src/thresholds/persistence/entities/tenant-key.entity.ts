import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { TenantEntity } from './tenant.entity';

/** An API key of a tenant, stored only as the SHA-256 digest of the key (hex). */
@Entity({ name: 'tenant_keys' })
@Unique('UQ_tenant_keys_hash', ['keyHash'])
@Index('IDX_tenant_keys_tenant', ['tenantId'])
export class TenantKeyEntity {
  @PrimaryColumn({
    name: 'key_id',
    type: 'varchar',
    length: 32,
    primaryKeyConstraintName: 'PK_tenant_keys',
  })
  keyId!: string;

  @Column({ name: 'tenant_id', type: 'varchar', length: 64 })
  tenantId!: string;

  @ManyToOne(() => TenantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'tenant_id',
    referencedColumnName: 'id',
    foreignKeyConstraintName: 'FK_tenant_keys_tenant',
  })
  tenant?: TenantEntity;

  @Column({ name: 'key_hash', type: 'char', length: 64 })
  keyHash!: string;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
