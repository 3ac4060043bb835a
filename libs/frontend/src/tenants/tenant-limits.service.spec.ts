import { EventPublisher } from '@sluice/bus';
import { Counter, Registry } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { TenantDirectory } from './tenant-directory.service';
import { TenantLimits } from './tenant-limits.service';
import { tenantRecord as tenant } from './tenant.fixture';

describe('TenantLimits', () => {
  let requests: Counter<string>;
  let published: unknown[];
  let sut: TenantLimits;
  const body = { max_tokens: 10 };

  beforeEach(() => {
    const registry = new Registry();
    requests = new Counter({
      name: 'requests',
      help: 'requests',
      labelNames: ['tenant', 'outcome'],
      registers: [registry],
    });
    const tokens = new Counter({
      name: 'tokens',
      help: 'tokens',
      labelNames: ['tenant', 'kind'],
      registers: [registry],
    });
    const directory = new TenantDirectory();
    directory.apply(tenant('a', { requestsPerMinute: 1, tokensPerMinute: 1000 }));
    published = [];
    const publisher = { publish: (_s: string, p: unknown) => void published.push(p) };
    sut = new TenantLimits(
      new FrontendConfig({}),
      directory,
      publisher as unknown as EventPublisher,
      requests,
      tokens,
    );
  });
  afterEach(() => sut.onModuleDestroy());

  const counted = async (outcome: string) =>
    (await requests.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;

  it('counts a request admitted once it is dispatched, not when its limits admit it', async () => {
    const charge = sut.admit('a', body, () => undefined);
    expect(await counted('admitted')).toBe(0);
    charge.dispatched();
    charge.dispatched();
    charge.refused();
    expect(await counted('admitted')).toBe(1);
    expect(await counted('overloaded')).toBe(0);
    expect(sut.report('a', 1).requests).toEqual({ admitted: 1, rate_limited: 0, overloaded: 0 });
  });

  it('counts a request refused after admission overloaded once, and gives its charge back', async () => {
    const charge = sut.admit('a', body, () => undefined);
    expect(sut.report('a', 1).last_minute).toMatchObject({ requests: 1 });
    charge.refused();
    charge.refused();
    expect(await counted('overloaded')).toBe(1);
    expect(await counted('admitted')).toBe(0);
    expect(sut.report('a', 1).requests).toEqual({ admitted: 0, rate_limited: 0, overloaded: 1 });
    expect(sut.report('a', 1).last_minute).toMatchObject({ requests: 0, tokens: 0 });
    // Its requests_per_minute of 1 is free again, here and on the other replicas.
    expect(() => sut.admit('a', body, () => undefined)).not.toThrow();
    sut.onModuleDestroy();
    expect(published).toEqual([{ origin: expect.any(String), usage: { a: [1, 10] } }]);
  });
});
