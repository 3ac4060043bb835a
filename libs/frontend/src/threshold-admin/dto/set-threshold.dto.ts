import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { IsStorableText } from '../../thresholds/dto/storable-text';
import { ThresholdPatchBase, ThresholdPatchFields } from '../../thresholds/dto/threshold-fields';

/**
 * Body of POST /busy_threshold: only `model` reads; a value sets a per-model key (a number, or
 * for `admission_control` one of its words); `null` clears it.
 */
@ThresholdPatchFields()
export class SetThresholdDto extends ThresholdPatchBase {
  /** The model to read or change. */
  @ApiProperty({ example: 'Qwen/Qwen3-0.6B', maxLength: 256 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  @IsStorableText()
  model!: string;
}
