import { EventPublisher } from '@sluice/bus';
import { Counter } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { TenantDirectory } from '../tenants/tenant-directory.service';
import { TenantLimits } from '../tenants/tenant-limits.service';
import { TENANT_STATUS_LIMITS, TenantStatus } from './tenant-status.service';
import { tenantRecord as tenant } from '../tenants/tenant.fixture';

const counter = { inc: () => undefined, labels: () => ({ inc: () => undefined }) };

describe('TenantStatus', () => {
  let directory: TenantDirectory;
  let limits: TenantLimits;
  const sut = (statusPageTenants = true) =>
    new TenantStatus(new FrontendConfig({ statusPageTenants }), directory, limits);
  const admit = (id: string, n: number) => {
    for (let i = 0; i < n; i++) limits.admit(id, {}, (release) => release()).dispatched();
  };

  beforeEach(() => {
    directory = new TenantDirectory();
    limits = new TenantLimits(
      new FrontendConfig({}),
      directory,
      { publish: () => undefined } as unknown as EventPublisher,
      counter as unknown as Counter<string>,
      counter as unknown as Counter<string>,
    );
  });

  it('lists nothing without --status-page-tenants', () => {
    directory.apply(tenant('a'));
    expect(sut(false).snapshot()).toBeNull();
  });

  it("gives each tenant its weight's share, its admitted share, refusals by reason and limits", () => {
    directory.apply(tenant('a', { weight: 3, requestsPerMinute: 3 }));
    directory.apply(tenant('b', { maxConcurrency: 4, priority: 'standard' }));
    admit('a', 3);
    expect(() => admit('a', 1)).toThrow();
    limits.overloaded('b');
    admit('b', 1);
    const s = sut().snapshot();
    expect(s).toMatchObject({ window_minutes: 5, tenants_total: 2, tenants_omitted: 0 });
    expect(s?.tenants).toEqual([
      {
        tenant: 'a',
        weight: 3,
        weight_share: 0.75,
        requests: { admitted: 3, rate_limited: 1, overloaded: 0 },
        admitted_share: 0.75,
        tokens: { prompt: 0, completion: 0 },
        in_flight: 0,
        limits: {
          requests_per_minute: 3,
          tokens_per_minute: null,
          max_concurrency: null,
          priority: null,
        },
      },
      expect.objectContaining({
        tenant: 'b',
        weight_share: 0.25,
        requests: { admitted: 1, rate_limited: 0, overloaded: 1 },
        admitted_share: 0.25,
        limits: expect.objectContaining({ max_concurrency: 4, priority: 'standard' }) as unknown,
      }),
    ]);
  });

  it('lists the busiest tenants, then by id, and counts the rest', () => {
    const n = TENANT_STATUS_LIMITS.maxTenants + 3;
    for (let i = 0; i < n; i++) directory.apply(tenant(`t${String(i).padStart(3, '0')}`));
    admit('t052', 2);
    const s = sut().snapshot();
    expect(s?.tenants_total).toBe(n);
    expect(s?.tenants_omitted).toBe(3);
    expect(s?.tenants.map((t) => t.tenant).slice(0, 3)).toEqual(['t052', 't000', 't001']);
    expect(s?.tenants.every((t) => t.admitted_share === (t.tenant === 't052' ? 1 : 0))).toBe(true);
  });

  it('has no admitted share while nothing was admitted', () => {
    directory.apply(tenant('a'));
    expect(sut().snapshot()?.tenants[0].admitted_share).toBeNull();
  });
});
