import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { IsStorableText } from '../../thresholds/dto/storable-text';
import { ThresholdPatchBase, ThresholdPatchFields } from '../../thresholds/dto/threshold-fields';

/** The longest `reason` (the audit column is varchar(512)). */
export const REASON_MAX_LENGTH = 512;
/** The longest `ttl_secs`: one week. */
export const TTL_MAX_SECS = 604_800;

/** `model` and the thresholds; a base so that the fields below follow them in OpenAPI. */
@ThresholdPatchFields()
class ThresholdChangeFields extends ThresholdPatchBase {
  /** The model to read or change. */
  @ApiProperty({ example: 'Qwen/Qwen3-0.6B', maxLength: 256 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  @IsStorableText()
  model!: string;
}

/**
 * Body of POST /busy_threshold: only `model` reads; a value sets a per-model key (a number, or
 * for `admission_control` one of its words); `null` clears it.
 */
export class SetThresholdDto extends ThresholdChangeFields {
  /** Why the change is made; kept in its audit entry. Needs a threshold key. */
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: REASON_MAX_LENGTH,
    example: 'launch traffic: more headroom until the new workers are up',
  })
  @IsOptional()
  @IsString()
  @MaxLength(REASON_MAX_LENGTH)
  @IsStorableText()
  reason?: string | null;

  /**
   * Makes the change temporary: after this many seconds each key it sets returns to its value
   * from before (an audited change by actor `system`, source `ttl-expiry`), unless a later write
   * set that key again. Needs a threshold key.
   */
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    maximum: TTL_MAX_SECS,
    example: 3600,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(TTL_MAX_SECS)
  ttl_secs?: number | null;
}
