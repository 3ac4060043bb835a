import { Injectable } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { TenantDirectory } from '../tenants/tenant-directory.service';
import { TenantLimits } from '../tenants/tenant-limits.service';
import { TenantStatusDto, TenantsStatusDto } from './dto/tenant-status.dto';

/**
 * Bounds on the tenants section: the page polls every second and tenants are as many as the
 * admins made. The busiest are listed; the rest are counted.
 */
export const TENANT_STATUS_LIMITS = { maxTenants: 50, windowMinutes: 5 } as const;

/** The tenants section of `GET /ui/status.json`, from this replica's tenant usage. */
@Injectable()
export class TenantStatus {
  constructor(
    private readonly config: FrontendConfig,
    private readonly directory: TenantDirectory,
    private readonly limits: TenantLimits,
  ) {}

  /** Null unless `--status-page-tenants`: tenants' usage is per customer (decision 0210). */
  snapshot(): TenantsStatusDto | null {
    if (!this.config.statusPageTenants) return null;
    const { maxTenants, windowMinutes } = TENANT_STATUS_LIMITS;
    let weights = 0;
    let admitted = 0;
    const all: Array<Omit<TenantStatusDto, 'weight_share' | 'admitted_share'>> = [];
    for (const id of this.directory.ids()) {
      const record = this.directory.get(id);
      if (!record) continue;
      const { requests, tokens, last_minute } = this.limits.report(id, windowMinutes);
      weights += record.weight;
      admitted += requests.admitted;
      all.push({
        tenant: id,
        weight: record.weight,
        requests,
        tokens,
        in_flight: last_minute.in_flight,
        limits: {
          requests_per_minute: record.requestsPerMinute,
          tokens_per_minute: record.tokensPerMinute,
          max_concurrency: record.maxConcurrency,
          priority: record.priority,
        },
      });
    }
    const seen = (t: (typeof all)[number]): number =>
      t.requests.admitted + t.requests.rate_limited + t.requests.overloaded;
    // Stable: ids() is sorted, so equal counts stay in id order.
    const listed = all.sort((a, b) => seen(b) - seen(a)).slice(0, maxTenants);
    return {
      window_minutes: windowMinutes,
      tenants_total: all.length,
      tenants_omitted: all.length - listed.length,
      tenants: listed.map((t) => ({
        ...t,
        weight_share: weights > 0 ? t.weight / weights : 0,
        admitted_share: admitted > 0 ? t.requests.admitted / admitted : null,
      })),
    };
  }
}
