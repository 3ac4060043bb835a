import { Column, Entity, PrimaryColumn } from 'typeorm';
import { PendingReverts } from '../pending-reverts';
import { ThresholdColumns, ThresholdColumnsBase } from './threshold-columns';

/** The stored per-model thresholds; `null` = no per-model value (the global flag applies). */
@Entity({ name: 'model_thresholds' })
@ThresholdColumns()
export class ModelThresholdEntity extends ThresholdColumnsBase {
  @PrimaryColumn({
    type: 'varchar',
    length: 256,
    primaryKeyConstraintName: 'PK_model_thresholds',
  })
  model!: string;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;

  /** Id of the audit row of the newest change: the model's version (ETag); null = never changed. */
  @Column({ name: 'last_audit_id', type: 'bigint', nullable: true })
  lastAuditId!: string | null;

  /** Per threshold key, the value a temporary change returns to and when. */
  @Column({ name: 'pending_reverts', type: 'jsonb', nullable: true })
  pendingReverts!: PendingReverts | null;

  /** The earliest time in `pendingReverts`: what the replicas poll for. */
  @Column({ name: 'revert_at', type: 'timestamptz', nullable: true })
  revertAt!: Date | null;
}
