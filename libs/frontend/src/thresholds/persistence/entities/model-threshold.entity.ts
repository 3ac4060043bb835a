import { Check, Column, Entity, PrimaryColumn, ValueTransformer } from 'typeorm';

/** pg returns int8 as a string (it may exceed 2^53); thresholds are validated far below that. */
const int8AsNumber: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

/**
 * The stored per-model thresholds; `null` = no per-model value (the global flag applies). Each
 * property is named like its key in threshold-keys.ts and each column like its wire name.
 */
@Entity({ name: 'model_thresholds' })
@Check('CHK_model_thresholds_decode', `"active_decode_blocks_threshold" BETWEEN 0 AND 1`)
@Check('CHK_model_thresholds_prefill', `"active_prefill_tokens_threshold" >= 0`)
@Check(
  'CHK_model_thresholds_prefill_frac',
  `"active_prefill_tokens_threshold_frac" >= 0 AND "active_prefill_tokens_threshold_frac" < 'Infinity'`,
)
@Check('CHK_model_thresholds_waiting', `"waiting_requests_threshold" >= 0`)
export class ModelThresholdEntity {
  @PrimaryColumn({
    type: 'varchar',
    length: 256,
    primaryKeyConstraintName: 'PK_model_thresholds',
  })
  model!: string;

  @Column({ name: 'active_decode_blocks_threshold', type: 'double precision', nullable: true })
  activeDecodeBlocks!: number | null;

  @Column({
    name: 'active_prefill_tokens_threshold',
    type: 'bigint',
    nullable: true,
    transformer: int8AsNumber,
  })
  activePrefillTokens!: number | null;

  @Column({
    name: 'active_prefill_tokens_threshold_frac',
    type: 'double precision',
    nullable: true,
  })
  activePrefillTokensFrac!: number | null;

  @Column({
    name: 'waiting_requests_threshold',
    type: 'bigint',
    nullable: true,
    transformer: int8AsNumber,
  })
  waitingRequests!: number | null;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}
