import { FrontendConfig } from '../config/frontend-config';
import { InvalidApiKeyError } from './errors/tenant.errors';
import { keyDigest, TenantDirectory } from './tenant-directory.service';
import { InvalidTenantHeaderError, TenantIdentity } from './tenant-identity';

function directoryWith(id: string, key: string, priority: string | null = null): TenantDirectory {
  const d = new TenantDirectory();
  d.apply({
    id,
    weight: 1,
    requestsPerMinute: null,
    tokensPerMinute: null,
    maxConcurrency: null,
    priority,
    keys: [{ keyId: 'k1', keyHash: keyDigest(key), createdAt: '' }],
    createdAt: '',
    updatedAt: '',
    version: '1',
  });
  return d;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('TenantIdentity', () => {
  const directory = directoryWith('acme', 'sk-sluice-acme', 'standard');

  it('charges a request to the tenant holding its key, else the header, else default', () => {
    const sut = new TenantIdentity(new FrontendConfig({ tenantHeader: 'x-tenant' }), directory);
    expect(sut.tenantOf(bearer('sk-sluice-acme'))).toBe('acme');
    expect(sut.tenantOf({ ...bearer('sk-sluice-acme'), 'x-tenant': 'other-one' })).toBe('acme');
    expect(sut.tenantOf({ ...bearer('unknown'), 'x-tenant': 'gw-1' })).toBe('gw-1');
    expect(sut.tenantOf(bearer('unknown'))).toBe('default');
    expect(sut.tenantOf({})).toBe('default');
  });

  it('answers 401 with --require-tenant when neither key nor header names a tenant', () => {
    const sut = new TenantIdentity(new FrontendConfig({ requireTenant: true }), directory);
    expect(() => sut.tenantOf(bearer('unknown'))).toThrow(InvalidApiKeyError);
    expect(() => sut.tenantOf({})).toThrow(InvalidApiKeyError);
    expect(sut.refuses({})).toBe(true);
    expect(sut.refuses(bearer('sk-sluice-acme'))).toBe(false);
    expect(sut.tenantOf(bearer('sk-sluice-acme'))).toBe('acme');
  });

  it('refuses a header value that cannot be a tenant id with a 400', () => {
    const sut = new TenantIdentity(new FrontendConfig({ tenantHeader: 'x-tenant' }), directory);
    expect(() => sut.tenantOf({ 'x-tenant': 'no spaces' })).toThrow(InvalidTenantHeaderError);
  });

  it('serves a request at most as its tenant`s priority cap', () => {
    const sut = new TenantIdentity(new FrontendConfig(), directory);
    expect(sut.capped('acme', 'critical')).toBe('standard');
    expect(sut.capped('acme', 'sheddable')).toBe('sheddable');
    expect(sut.capped('default', 'critical')).toBe('critical');
  });

  it('forgets a revoked key when the tenant is applied again without it', () => {
    const d = directoryWith('acme', 'sk-1');
    const record = d.get('acme');
    d.apply({ ...record!, keys: [], version: '2' });
    expect(d.tenantOfKey('sk-1')).toBeUndefined();
    // An older state that arrives late does not bring it back.
    d.apply({ ...record!, version: '1' });
    expect(d.tenantOfKey('sk-1')).toBeUndefined();
  });
});
