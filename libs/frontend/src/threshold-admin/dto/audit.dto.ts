import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { IsStorableText } from '../../thresholds/dto/storable-text';
import { ThresholdValuesDto } from '../../thresholds/dto/threshold-values.dto';

export class AuditQueryDto {
  /** Only changes to this model. */
  @ApiPropertyOptional({ example: 'Qwen/Qwen3-0.6B' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  @IsStorableText()
  model?: string;

  /** Page size, 1..500 (default 50). */
  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;

  /** The `next` cursor of the previous page. */
  @ApiPropertyOptional({ example: '42' })
  @IsOptional()
  @Matches(/^[1-9][0-9]{0,18}$/, { message: 'before must be a cursor returned as next' })
  before?: string;
}

export class AuditEntryDto {
  @ApiProperty({ example: '42' })
  id!: string;

  @ApiProperty({ example: '2026-11-30T06:00:00.000Z' })
  at!: string;

  /**
   * The admin token's name, `anonymous` for an unauthenticated loopback write, `system` for the
   * revert of a temporary change.
   */
  @ApiProperty({ example: 'alice' })
  actor!: string;

  @ApiProperty({ example: 'Qwen/Qwen3-0.6B' })
  model!: string;

  /** The stored per-model values before the change (`null` where none was stored). */
  @ApiProperty({ type: ThresholdValuesDto })
  before!: ThresholdValuesDto;

  /** The stored per-model values after the change. */
  @ApiProperty({ type: ThresholdValuesDto })
  after!: ThresholdValuesDto;

  /** The client address the change came from; `ttl-expiry` for the revert of a temporary change. */
  @ApiProperty({ example: '127.0.0.1' })
  source!: string;

  /** The `reason` the change carried; null when none was given. */
  @ApiProperty({ type: String, nullable: true, example: 'launch traffic' })
  reason!: string | null;

  /**
   * A temporary change (`ttl_secs`): when it was due to revert, as asked (a later write of the
   * same key supersedes it). Null for a lasting change.
   */
  @ApiProperty({ type: String, nullable: true, example: '2026-11-30T07:00:00.000Z' })
  expires_at!: string | null;
}

export class AuditPageDto {
  @ApiProperty({ type: [AuditEntryDto] })
  entries!: AuditEntryDto[];

  /** Pass back as `before` for the next page; null on the last page. */
  @ApiProperty({ type: String, nullable: true, example: '17' })
  next!: string | null;
}
