import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { WireKey } from '../../thresholds/threshold-wire';
import {
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { IsStorableText } from '../../thresholds/dto/storable-text';

/** Present and not null: validate it. `null` clears the stored value; absent leaves it. */
const whenGiven = ValidateIf((_o: object, v: unknown) => v !== undefined && v !== null);

/** Body of POST /busy_threshold: only `model` reads; a number sets; `null` clears. */
export class SetThresholdDto implements Partial<Record<WireKey, number | null>> {
  /** The model to read or change. */
  @ApiProperty({ example: 'Qwen/Qwen3-0.6B', maxLength: 256 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  @IsStorableText()
  model!: string;

  /** Busy when active_decode_blocks / kv_total_blocks exceeds this (0..1); null clears. */
  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 0, maximum: 1, example: 0.85 })
  @whenGiven
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(1)
  active_decode_blocks_threshold?: number | null;

  /** Busy when active_prefill_tokens exceeds this (integer >= 0); null clears. */
  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 0, example: 4096 })
  @whenGiven
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  active_prefill_tokens_threshold?: number | null;

  /** Busy when active_prefill_tokens exceeds floor(F x max_num_batched_tokens); null clears. */
  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 0, example: 1.5 })
  @whenGiven
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  active_prefill_tokens_threshold_frac?: number | null;

  /** Busy when num_requests_waiting exceeds this (integer >= 0); null clears. */
  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 0, example: 8 })
  @whenGiven
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  waiting_requests_threshold?: number | null;
}
