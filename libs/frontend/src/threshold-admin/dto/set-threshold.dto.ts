import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { IsStorableText } from '../../thresholds/dto/storable-text';
import { ThresholdPatchBase, ThresholdPatchFields } from '../../thresholds/dto/threshold-fields';

/** Body of POST /busy_threshold: only `model` reads; a number sets a threshold; `null` clears it. */
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
