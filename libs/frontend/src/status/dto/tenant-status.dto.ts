import { ApiProperty } from '@nestjs/swagger';

/** A tenant's limits as configured (`PUT /tenants/{id}`); null: no limit. */
export class TenantLimitsStatusDto {
  @ApiProperty({ type: Number, nullable: true, example: 600 })
  requests_per_minute!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: 200000 })
  tokens_per_minute!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: 8 })
  max_concurrency!: number | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'standard',
    description: 'the highest priority class the tenant may ask for; null: any',
  })
  priority!: string | null;
}

/** A tenant's requests on this frontend over the window, by outcome. */
export class TenantRequestsStatusDto {
  @ApiProperty({ example: 120 })
  admitted!: number;

  @ApiProperty({ example: 3, description: 'refused 429: over one of its limits' })
  rate_limited!: number;

  @ApiProperty({ example: 1, description: 'refused 503: the fleet was full (or would be)' })
  overloaded!: number;
}

/** Tokens of a tenant's admitted requests on this frontend over the window (actual usage). */
export class TenantTokensStatusDto {
  @ApiProperty({ example: 4000 })
  prompt!: number;

  @ApiProperty({ example: 900 })
  completion!: number;
}

/** One tenant on this frontend: its weight and limits, and what it was admitted and refused. */
export class TenantStatusDto {
  @ApiProperty({ example: 'team-a' })
  tenant!: string;

  @ApiProperty({ example: 3 })
  weight!: number;

  @ApiProperty({
    example: 0.75,
    description: "weight / the sum of every tenant's weight: its fair share when all are waiting",
  })
  weight_share!: number;

  @ApiProperty({ type: TenantRequestsStatusDto })
  requests!: TenantRequestsStatusDto;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 0.7,
    description: "its admitted requests / every tenant's admitted requests; null when none were",
  })
  admitted_share!: number | null;

  @ApiProperty({ type: TenantTokensStatusDto })
  tokens!: TenantTokensStatusDto;

  @ApiProperty({ example: 2, description: 'its requests in flight on this frontend' })
  in_flight!: number;

  @ApiProperty({ type: TenantLimitsStatusDto })
  limits!: TenantLimitsStatusDto;
}

/** The tenants known to this frontend (with `--status-page-tenants`). */
export class TenantsStatusDto {
  @ApiProperty({
    example: 5,
    description:
      'requests and tokens are counted over the last this many minutes, the current one included',
  })
  window_minutes!: number;

  @ApiProperty({ example: 2, description: 'tenants configured' })
  tenants_total!: number;

  @ApiProperty({ description: 'tenants left out of `tenants` to keep the answer small' })
  tenants_omitted!: number;

  @ApiProperty({
    type: [TenantStatusDto],
    description: 'most requests over the window first, then by id',
  })
  tenants!: TenantStatusDto[];
}
