import { TenantRecord } from '../thresholds/persistence';

/** For unit specs: a stored tenant of weight 1 without limits or keys, with `over` applied. */
export const tenantRecord = (id: string, over: Partial<TenantRecord> = {}): TenantRecord => ({
  id,
  weight: 1,
  requestsPerMinute: null,
  tokensPerMinute: null,
  maxConcurrency: null,
  priority: null,
  keys: [],
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  version: '1',
  ...over,
});
