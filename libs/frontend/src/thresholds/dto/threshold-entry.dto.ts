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
