import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { IsStorableText } from '../../thresholds/dto/storable-text';

/** A page of the list when either key is given (default size below); neither: the whole list. */
export const DEFAULT_LIST_PAGE = 100;
export const MAX_LIST_PAGE = 1000;

export class ThresholdListQueryDto {
  /** Page size, 1..1000 (default 100 when `after` is given alone). */
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_LIST_PAGE, default: DEFAULT_LIST_PAGE })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_LIST_PAGE)
  limit?: number;

  /** The `next` of the previous page: entries of models after this one. */
  @ApiPropertyOptional({ example: 'Qwen/Qwen3-0.6B' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  @IsStorableText()
  after?: string;
}
