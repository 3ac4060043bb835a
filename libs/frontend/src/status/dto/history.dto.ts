import { ApiProperty } from '@nestjs/swagger';

const NULLABLE_NUMBERS = { type: 'array', items: { type: 'number', nullable: true } } as const;

/** Rejections per second in each bucket, by priority class (docs/security.md#priority-classes-who-may-set-x-sluice-priority, `x-sluice-priority`). */
export class RejectedByPriorityDto {
  @ApiProperty({ type: [Number], example: [0, 0] })
  critical!: number[];

  @ApiProperty({ type: [Number], example: [0, 1.2] })
  standard!: number[];

  @ApiProperty({ type: [Number], example: [0.4, 3.6] })
  sheddable!: number[];
}

/**
 * One model's last 10 minutes in buckets of `bucket_seconds`, oldest first; every array has one
 * value per bucket. Only complete buckets are listed (the newest ends at most one bucket ago);
 * the first one of a new history is shorter, its rates are over the time it covered.
 */
export class ModelHistoryDto {
  @ApiProperty({ example: 'Qwen/Qwen3-0.6B' })
  model!: string;

  @ApiProperty({
    type: [Number],
    example: [1764469995000, 1764470000000],
    description: 'when each bucket ends',
  })
  t_ms!: number[];

  @ApiProperty({
    type: [Number],
    example: [12.4, 10.8],
    description: 'requests sent to a worker per second (past admission and the router queue)',
  })
  admitted_per_second!: number[];

  @ApiProperty({
    type: RejectedByPriorityDto,
    description: 'overload rejections (the 503s counted in dynamo_frontend_model_rejection_total)',
  })
  rejected_per_second!: RejectedByPriorityDto;

  @ApiProperty({
    ...NULLABLE_NUMBERS,
    example: [0.5, 1],
    description:
      "mean share (0..1) of the model's live workers that were busy, sampled every second; " +
      'null where no worker was live',
  })
  busy_worker_share!: (number | null)[];

  @ApiProperty({
    ...NULLABLE_NUMBERS,
    example: [0.62, 0.81],
    description:
      "mean over the model's ranks of active_decode_blocks / kv_total_blocks (0..1), sampled " +
      'every second; null where no rank reported its KV size',
  })
  kv_usage!: (number | null)[];
}

export class HistoryDto {
  @ApiProperty({ example: 1764470000000 })
  generated_at_ms!: number;

  @ApiProperty({ example: 5 })
  bucket_seconds!: number;

  @ApiProperty({ example: 600, description: 'the span kept: bucket_seconds × buckets' })
  window_seconds!: number;

  @ApiProperty({ description: 'models with a history left out of `models`' })
  models_omitted!: number;

  @ApiProperty({
    type: [ModelHistoryDto],
    description:
      'sorted by name; a model has a history from its first load report with a live worker until ' +
      'it is forgotten, or has had no live worker for a whole window',
  })
  models!: ModelHistoryDto[];
}
