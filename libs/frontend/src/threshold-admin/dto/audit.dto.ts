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

  /** The admin token's name, or `anonymous` for an unauthenticated loopback write. */
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

  /** The client address the change came from. */
  @ApiProperty({ example: '127.0.0.1' })
  source!: string;
}

export class AuditPageDto {
  @ApiProperty({ type: [AuditEntryDto] })
  entries!: AuditEntryDto[];

  /** Pass back as `before` for the next page; null on the last page. */
  @ApiProperty({ type: String, nullable: true, example: '17' })
  next!: string | null;
}
