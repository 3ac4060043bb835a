import { SHARE_TAU_MS, TenantShares } from './tenant-shares';

describe('TenantShares', () => {
  let sut: TenantShares;
  beforeEach(() => (sut = new TenantShares()));

  const admit = (tenant: string, n: number, at = 0, weight = 1) => {
    for (let i = 0; i < n; i++) sut.admitted('m', tenant, weight, at);
  };

  it('never puts a lone tenant under its share, nor one of a model without admissions', () => {
    expect(sut.underShare('m', 'default', 1, 0)).toBe(false);
    admit('default', 5);
    expect(sut.underShare('m', 'default', 1, 0)).toBe(false);
  });

  it('puts a tenant with fewer recent admissions per unit of weight under its share', () => {
    admit('a', 6);
    admit('b', 1);
    expect(sut.underShare('m', 'b', 1, 0)).toBe(true);
    expect(sut.underShare('m', 'a', 1, 0)).toBe(false);
    // A tenant new to the model is under the share of those already served.
    expect(sut.underShare('m', 'c', 1, 0)).toBe(true);
  });

  it('weighs the share: weight 3 against 1 entitles to three times as many', () => {
    admit('a', 6, 0, 3);
    admit('b', 2);
    expect(sut.underShare('m', 'a', 3, 0)).toBe(false);
    expect(sut.underShare('m', 'b', 1, 0)).toBe(false);
    admit('b', 1);
    expect(sut.underShare('m', 'a', 3, 0)).toBe(true);
    expect(sut.underShare('m', 'b', 1, 0)).toBe(false);
  });

  it('forgets tenants idle long enough, and models forgotten', () => {
    admit('a', 6);
    expect(sut.underShare('m', 'b', 1, 0)).toBe(true);
    expect(sut.underShare('m', 'b', 1, 30 * SHARE_TAU_MS)).toBe(false);
    sut.forget('m');
    expect(sut.underShare('m', 'b', 1, 0)).toBe(false);
  });

  it('counts recent admissions more than old ones', () => {
    admit('a', 4, 0);
    admit('b', 3, 3 * SHARE_TAU_MS);
    // b's three are recent, a's four have faded: a is now the one under its share.
    expect(sut.underShare('m', 'a', 1, 3 * SHARE_TAU_MS)).toBe(true);
    expect(sut.underShare('m', 'b', 1, 3 * SHARE_TAU_MS)).toBe(false);
  });
});
