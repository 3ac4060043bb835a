import { ApiProperty } from '@nestjs/swagger';

/** The thresholds in force for one model: stored per-model value, else global flag, else null. */
export class ThresholdEntryDto {
  @ApiProperty({ example: 'Qwen/Qwen3-0.6B' })
  model!: string;

  @ApiProperty({ type: Number, nullable: true, example: 0.85 })
  active_decode_blocks_threshold!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: null })
  active_prefill_tokens_threshold!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: null })
  active_prefill_tokens_threshold_frac!: number | null;
}

export class ThresholdListDto {
  @ApiProperty({ type: [ThresholdEntryDto] })
  thresholds!: ThresholdEntryDto[];
}
