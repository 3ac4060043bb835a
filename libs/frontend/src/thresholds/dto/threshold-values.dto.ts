import { ApiProperty } from '@nestjs/swagger';
import { WireThresholdValues } from '../threshold-wire';

/** The four threshold keys of contract §3.2 and §5, each always present, `null` where none applies. */
export class ThresholdValuesDto implements WireThresholdValues {
  /** Busy when active_decode_blocks / kv_total_blocks exceeds this (0..1). */
  @ApiProperty({ type: Number, nullable: true, minimum: 0, maximum: 1, example: 0.85 })
  active_decode_blocks_threshold!: number | null;

  /** Busy when active_prefill_tokens exceeds this (an integer). */
  @ApiProperty({ type: Number, nullable: true, minimum: 0, example: null })
  active_prefill_tokens_threshold!: number | null;

  /** Busy when active_prefill_tokens exceeds floor(F x max_num_batched_tokens). */
  @ApiProperty({ type: Number, nullable: true, minimum: 0, example: null })
  active_prefill_tokens_threshold_frac!: number | null;

  /** Busy when num_requests_waiting (requests queued in the engine) exceeds this (an integer). */
  @ApiProperty({ type: Number, nullable: true, minimum: 0, example: null })
  waiting_requests_threshold!: number | null;
}
