import { ApiProperty } from '@nestjs/swagger';
import { ThresholdValuesDto } from './threshold-values.dto';

/**
 * The values in force for one model (thresholds and admission mode): stored per-model value, else
 * global flag, else null.
 */
export class ThresholdEntryDto extends ThresholdValuesDto {
  @ApiProperty({ example: 'Qwen/Qwen3-0.6B' })
  model!: string;
}

export class ThresholdListDto {
  @ApiProperty({ type: [ThresholdEntryDto] })
  thresholds!: ThresholdEntryDto[];
}

export class ThresholdPageDto extends ThresholdListDto {
  /** The last model of this page: pass it back as `after` for the next page; null on the last. */
  @ApiProperty({ type: String, nullable: true, example: 'Qwen/Qwen3-0.6B' })
  next!: string | null;
}
