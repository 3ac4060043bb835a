import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { WireThresholdValues } from '../../threshold-wire';

/**
 * Stored shape of `before` / `after`: docs/api.md#busy-thresholds's keys, `null` where no value is stored. Rows
 * written before a threshold existed lack its key; they are read through `wireOf`.
 */
export type StoredThresholds = Partial<WireThresholdValues>;

/** One row per threshold change, written in the change's own transaction. */
@Entity({ name: 'threshold_audit' })
@Index('IDX_threshold_audit_model_id', ['model', 'id'])
export class ThresholdAuditEntity {
  /** bigserial; pg returns int8 as a string, which is also the API's cursor type. */
  @PrimaryGeneratedColumn('increment', {
    type: 'bigint',
    primaryKeyConstraintName: 'PK_threshold_audit',
  })
  id!: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  at!: Date;

  @Column({ type: 'varchar', length: 128 })
  actor!: string;

  @Column({ type: 'varchar', length: 256 })
  model!: string;

  @Column({ type: 'jsonb' })
  before!: StoredThresholds;

  @Column({ type: 'jsonb' })
  after!: StoredThresholds;

  /** The client address the change came from. */
  @Column({ type: 'varchar', length: 128 })
  source!: string;

  @Column({ name: 'request_id', type: 'varchar', length: 128, nullable: true })
  requestId!: string | null;

  /** Why, in the words of whoever made the change. */
  @Column({ type: 'varchar', length: 512, nullable: true })
  reason!: string | null;

  /** A temporary change: when it is due to revert (as asked; a later write may supersede it). */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;
}
