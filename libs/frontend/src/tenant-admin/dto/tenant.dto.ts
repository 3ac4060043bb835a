import { ApiProperty } from '@nestjs/swagger';

/** One API key of a tenant: its id and when it was made; the key itself is never shown again. */
export class TenantKeyDto {
  @ApiProperty()
  key_id!: string;
  @ApiProperty({ description: 'ISO-8601' })
  created_at!: string;
}

/** A tenant as `GET /tenants/{id}` answers it. */
export class TenantDto {
  @ApiProperty({ description: 'Letters, digits, `.`, `_`, `-`; 1 to 64 characters' })
  id!: string;
  @ApiProperty({
    description: "Share of a saturated model's capacity relative to other tenants; > 0, default 1",
  })
  weight!: number;
  /** Requests admitted per minute at most; null: no limit. */
  @ApiProperty({ type: Number, nullable: true })
  requests_per_minute!: number | null;
  /** Tokens (prompt + max_tokens at admission, actual usage at the end) per minute; null: no limit. */
  @ApiProperty({ type: Number, nullable: true })
  tokens_per_minute!: number | null;
  /** Requests in flight at most; null: no limit. */
  @ApiProperty({ type: Number, nullable: true })
  max_concurrency!: number | null;
  /** The highest priority class the tenant may ask for with `x-sluice-priority`; null: any. */
  @ApiProperty({ enum: ['critical', 'standard', 'sheddable'], nullable: true })
  priority!: string | null;
  @ApiProperty({ type: [TenantKeyDto] })
  keys!: TenantKeyDto[];
  @ApiProperty({ description: 'ISO-8601' })
  created_at!: string;
  @ApiProperty({ description: 'ISO-8601' })
  updated_at!: string;
}

export class TenantListDto {
  @ApiProperty({ type: [TenantDto] })
  tenants!: TenantDto[];
  /** Pass as `after` for the next page; null on the last page. */
  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

/** The body of `PUT /tenants/{id}`: an absent key takes its default (weight 1, no limit). */
export class PutTenantDto {
  @ApiProperty({
    required: false,
    default: 1,
    minimum: 0,
    exclusiveMinimum: true,
    maximum: 1000000,
  })
  weight?: number;
  @ApiProperty({ required: false, type: Number, nullable: true, minimum: 1 })
  requests_per_minute?: number | null;
  @ApiProperty({ required: false, type: Number, nullable: true, minimum: 1 })
  tokens_per_minute?: number | null;
  @ApiProperty({ required: false, type: Number, nullable: true, minimum: 1 })
  max_concurrency?: number | null;
  @ApiProperty({
    required: false,
    enum: ['critical', 'standard', 'sheddable'],
    nullable: true,
  })
  priority?: string | null;
  /** Why, for the audit log (at most 512 characters). */
  @ApiProperty({ required: false, maxLength: 512 })
  reason?: string;
}

export class NewKeyDto {
  @ApiProperty({
    example: 'sk-sluice-…',
    description: 'The key, shown this once: the store keeps only its SHA-256 digest',
  })
  key!: string;
  @ApiProperty()
  key_id!: string;
}

export class TenantAuditEntryDto {
  @ApiProperty()
  id!: string;
  @ApiProperty({ description: 'ISO-8601' })
  at!: string;
  @ApiProperty({ description: "the admin token's name" })
  actor!: string;
  @ApiProperty()
  tenant!: string;
  @ApiProperty({ enum: ['put', 'delete', 'key_created', 'key_deleted'] })
  action!: string;
  /** The tenant before the change (its settings and key ids); null when it did not exist. */
  @ApiProperty({ type: Object, nullable: true })
  before!: object | null;
  @ApiProperty({ type: Object, nullable: true })
  after!: object | null;
  @ApiProperty()
  source!: string;
  @ApiProperty({ type: String, nullable: true })
  reason!: string | null;
}

export class TenantAuditPageDto {
  @ApiProperty({ type: [TenantAuditEntryDto] })
  entries!: TenantAuditEntryDto[];
  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export class TenantRequestsUsageDto {
  @ApiProperty()
  admitted!: number;
  @ApiProperty({ description: 'refused 429: over one of its limits' })
  rate_limited!: number;
  @ApiProperty({ description: 'refused 503: the fleet was full' })
  overloaded!: number;
}

export class TenantTokensUsageDto {
  @ApiProperty()
  prompt!: number;
  @ApiProperty()
  completion!: number;
}

export class TenantLastMinuteDto {
  @ApiProperty()
  requests!: number;
  @ApiProperty()
  tokens!: number;
  @ApiProperty()
  in_flight!: number;
}

export class TenantUsageDto {
  @ApiProperty()
  tenant!: string;
  @ApiProperty({ example: '1h' })
  window!: string;
  @ApiProperty({
    type: TenantRequestsUsageDto,
    description: 'Requests of the tenant on this replica over the window, by outcome',
  })
  requests!: TenantRequestsUsageDto;
  @ApiProperty({
    type: TenantTokensUsageDto,
    description: 'Tokens of its admitted requests on this replica over the window (actual usage)',
  })
  tokens!: TenantTokensUsageDto;
  @ApiProperty({
    type: TenantLastMinuteDto,
    description:
      "The last minute as the tenant's limits count it: every replica's consumption, and in flight here",
  })
  last_minute!: TenantLastMinuteDto;
}
