import { Column, Entity, PrimaryColumn } from 'typeorm';
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
}
