import { ApiProperty } from '@nestjs/swagger';
import { ADMISSION_CONTROLS, AdmissionControl } from '../../config/threshold-keys';
import { ThresholdEntryDto } from '../../thresholds/dto/threshold-entry.dto';
import type { EjectionPhase } from '../../worker-monitor/outlier-ejection';
import { TenantsStatusDto } from './tenant-status.dto';

/** One data-parallel rank as last reported; the load numbers are null until it reports. */
export class RankStatusDto {
  @ApiProperty({ example: 0 })
  dp_rank!: number;

  @ApiProperty({ description: 'false until the rank has sent a load report' })
  reported!: boolean;

  @ApiProperty({ type: Number, nullable: true, example: 95 })
  active_decode_blocks!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: 100 })
  kv_total_blocks!: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 0.95,
    description: 'active_decode_blocks / kv_total_blocks (null when either is unknown or 0)',
  })
  kv_usage!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: 0 })
  active_prefill_tokens!: number | null;

  @ApiProperty({
    enum: ['reported', 'frontend'],
    nullable: true,
    description:
      "where active_prefill_tokens comes from: the rank's reports, or (for engines that do not " +
      'export it) the prompt tokens this frontend sent that have no first token yet (docs/api.md#nats-subjects)',
  })
  prefill_source!: 'reported' | 'frontend' | null;

  @ApiProperty({ type: Number, nullable: true, example: 8192 })
  max_num_batched_tokens!: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 4096,
    description: 'the prefill token count above which the rank is busy, when a threshold applies',
  })
  prefill_limit_tokens!: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 3,
    description: 'requests queued in the engine (num_requests_waiting); null when not reported',
  })
  num_requests_waiting!: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 12,
    description:
      "the rank's share (1/dp_size) of the KV blocks of requests this frontend sent the worker " +
      'since this rank’s newest report was measured, and which have not ended: added to ' +
      'active_decode_blocks when the busy rule judges the rank',
  })
  reserved_decode_blocks!: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 300,
    description:
      'likewise, the prompt tokens of those requests without a first token yet (added to a ' +
      'reported active_prefill_tokens)',
  })
  reserved_prefill_tokens!: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 1,
    description: 'likewise, those requests themselves (added to a reported num_requests_waiting)',
  })
  reserved_waiting_requests!: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 24,
    description:
      "the rank's share of the KV blocks the other frontend replicas reserved on the worker " +
      '(their newest reservations messages): added to active_decode_blocks as well',
  })
  shared_decode_blocks!: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 0,
    description: "likewise, the other replicas' reserved prompt tokens",
  })
  shared_prefill_tokens!: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 0,
    description: "likewise, the other replicas' reserved waiting requests",
  })
  shared_waiting_requests!: number | null;

  @ApiProperty({
    description: 'the decode threshold is exceeded (by the reported load plus the reservations)',
  })
  kv_over_threshold!: boolean;

  @ApiProperty({ description: 'a prefill threshold (absolute or fraction) is exceeded' })
  prefill_over_threshold!: boolean;

  @ApiProperty({ description: 'the waiting-requests threshold is exceeded' })
  waiting_over_threshold!: boolean;

  @ApiProperty({ description: 'any threshold is exceeded (docs/architecture.md#busy-rule)' })
  busy!: boolean;
}

/** What the worker's time-to-first-token model predicts now, and its fit (docs/architecture.md). */
export class TtftPredictionStatusDto {
  @ApiProperty({
    example: 42.5,
    description:
      'predicted ms from sending a request with an empty prompt to its first token, with the ' +
      'tokens ahead of it and the KV usage now; a prompt of p tokens adds ms_per_1k_tokens × p / 1000',
  })
  predicted_ms!: number;

  @ApiProperty({
    enum: ['seed', 'learned'],
    description:
      'seed: no streamed answer observed yet (defaults and reported load); learned: fitted',
  })
  basis!: 'seed' | 'learned';

  @ApiProperty({
    example: 20,
    description: 'a of TTFT ≈ a + b × (tokens ahead + prompt) / 1000 + c × KV usage',
  })
  base_ms!: number;

  @ApiProperty({
    example: 12.2,
    description: 'b of TTFT ≈ a + b × (tokens ahead + prompt) / 1000 + c × KV usage',
  })
  ms_per_1k_tokens!: number;

  @ApiProperty({
    example: 34,
    description: 'c of TTFT ≈ a + b × (tokens ahead + prompt) / 1000 + c × KV usage',
  })
  ms_at_full_kv!: number;

  @ApiProperty({
    example: 1500,
    description: 'prompt tokens ahead of a new request (per rank: reported or own, plus reserved)',
  })
  tokens_ahead!: number;

  @ApiProperty({
    example: 0.35,
    description:
      'KV usage of the worker now, 0..1 (mean over ranks: reported plus reserved blocks)',
  })
  kv_usage!: number;

  @ApiProperty({ example: 120, description: 'streamed answers the model has learned from' })
  observations!: number;
}

export class WorkerStatusDto {
  @ApiProperty({ example: 'w-1' })
  worker_id!: string;

  @ApiProperty({ example: 'http://127.0.0.1:9001' })
  endpoint!: string;

  @ApiProperty({ description: 'every rank is busy: the router sends it nothing' })
  busy!: boolean;

  @ApiProperty({ example: 1 })
  dp_size!: number;

  @ApiProperty({ description: 'requests this frontend has in flight on the worker' })
  inflight_requests!: number;

  @ApiProperty({ description: 'prompt tokens of those requests' })
  inflight_prompt_tokens!: number;

  @ApiProperty({ description: 'ms since the last load report arrived' })
  last_report_age_ms!: number;

  @ApiProperty({
    description:
      'ms since the newest report was measured (its timestamp_ms; when it arrived if it has none): ' +
      'how old the load is that admission judges the worker on',
  })
  report_measured_age_ms!: number;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'bridge vllm bridge-7c9f:1',
    description: "who publishes the worker's reports (their `source`), e.g. an engine bridge",
  })
  report_source!: string | null;

  @ApiProperty({
    enum: ['in', 'ejected', 'probe', 'probing'],
    description:
      'outlier ejection (--eject-after): `in` routing; `ejected` for a backoff after failing; ' +
      '`probe` back in routing for one probe request; `probing` out again while the probe runs. ' +
      'Out of routing, its load does not count for the 503 decision',
  })
  routing!: EjectionPhase;

  @ApiProperty({
    description: 'its requests that failed in a row (refused or cut connection, 5xx)',
  })
  consecutive_failures!: number;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'when the current ejection ends (ms since the epoch); null unless ejected',
  })
  ejected_until_ms!: number | null;

  @ApiProperty({ type: TtftPredictionStatusDto })
  ttft_prediction!: TtftPredictionStatusDto;

  @ApiProperty({ type: [RankStatusDto] })
  ranks!: RankStatusDto[];
}

/** One priority class of a model (docs/security.md#priority-classes-who-may-set-x-sluice-priority): its workers judged with the class's thresholds. */
export class PriorityClassStatusDto {
  @ApiProperty({ example: 1, description: 'live workers not busy for this class' })
  workers_free!: number;

  @ApiProperty({
    description: 'every live worker is busy for this class: its requests are refused',
  })
  all_busy!: boolean;
}

export class PriorityClassesStatusDto {
  @ApiProperty({ type: PriorityClassStatusDto, description: 'thresholds x the critical factor' })
  critical!: PriorityClassStatusDto;

  @ApiProperty({ type: PriorityClassStatusDto, description: 'the configured thresholds' })
  standard!: PriorityClassStatusDto;

  @ApiProperty({ type: PriorityClassStatusDto, description: 'thresholds x the sheddable factor' })
  sheddable!: PriorityClassStatusDto;
}

/** One model: its effective thresholds (as in `GET /busy_threshold`), traffic and workers. */
export class ModelStatusDto extends ThresholdEntryDto {
  @ApiProperty({ description: 'every live worker is busy (requests are rejected when enforced)' })
  all_busy!: boolean;

  @ApiProperty({ example: 0.4, description: 'rejections per second over the recent window' })
  rejections_per_second!: number;

  @ApiProperty({ description: 'rejections since this frontend started' })
  rejections_total!: number;

  @ApiProperty({ description: 'requests this frontend has in flight on the model’s workers' })
  inflight_requests!: number;

  @ApiProperty({ example: 2 })
  workers_total!: number;

  @ApiProperty({ example: 1 })
  workers_busy!: number;

  @ApiProperty({
    type: PriorityClassesStatusDto,
    description: 'per priority class: how many workers are free for it, and whether it is refused',
  })
  priority_classes!: PriorityClassesStatusDto;

  @ApiProperty({ description: 'workers left out of `workers` to keep the answer small' })
  workers_omitted!: number;

  @ApiProperty({ type: [WorkerStatusDto], description: 'sorted by worker id' })
  workers!: WorkerStatusDto[];
}

export class StatusDto {
  @ApiProperty({ example: 1764470000000 })
  generated_at_ms!: number;

  @ApiProperty({
    enum: ADMISSION_CONTROLS,
    description: "the global flag; each model's own mode is its `admission_control`",
  })
  admission_control!: AdmissionControl;

  @ApiProperty({ example: 5, description: 'window of `rejections_per_second`' })
  rejection_window_seconds!: number;

  @ApiProperty({ description: 'models left out of `models` to keep the answer small' })
  models_omitted!: number;

  @ApiProperty({ type: [ModelStatusDto], description: 'sorted by name' })
  models!: ModelStatusDto[];

  @ApiProperty({
    type: TenantsStatusDto,
    nullable: true,
    description: 'the tenants, their shares and refusals; null without `--status-page-tenants`',
  })
  tenants!: TenantsStatusDto | null;
}
