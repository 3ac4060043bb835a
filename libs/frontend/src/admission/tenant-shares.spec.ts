import { TenantShares } from './tenant-shares';

describe('TenantShares', () => {
  let sut: TenantShares;
  beforeEach(() => (sut = new TenantShares()));

  const start = (tenant: string, n: number, weight = 1) => {
    for (let i = 0; i < n; i++) sut.started('m', tenant, weight);
  };

  it('never puts a lone tenant under its share, nor one of a model nobody holds', () => {
    expect(sut.underShare('m', 'default', 1)).toBe(false);
    start('default', 5);
    expect(sut.underShare('m', 'default', 1)).toBe(false);
  });

  it('puts a tenant holding fewer requests per unit of weight under its share', () => {
    start('a', 6);
    start('b', 1);
    expect(sut.underShare('m', 'b', 1)).toBe(true);
    expect(sut.underShare('m', 'a', 1)).toBe(false);
    // A tenant holding nothing is under the share of those that hold something.
    expect(sut.underShare('m', 'c', 1)).toBe(true);
  });

  it('weighs the share: weight 3 against 1 entitles to three times as many', () => {
    start('a', 6, 3);
    start('b', 2);
    expect(sut.underShare('m', 'a', 3)).toBe(false);
    expect(sut.underShare('m', 'b', 1)).toBe(false);
    start('b', 1);
    expect(sut.underShare('m', 'a', 3)).toBe(true);
    expect(sut.underShare('m', 'b', 1)).toBe(false);
  });

  it('leaves out the requests that ask (a queued waiter counted already)', () => {
    start('a', 2);
    start('b', 2);
    expect(sut.underShare('m', 'b', 1)).toBe(false);
    // One of b's two is the waiter asking: b holds 1 of the other 3.
    expect(sut.underShare('m', 'b', 1, 1)).toBe(true);
  });

  it('forgets what ended: a tenant alone again is not under its share', () => {
    start('a', 2);
    start('b', 1);
    expect(sut.underShare('m', 'b', 1)).toBe(true);
    sut.ended('m', 'a');
    sut.ended('m', 'a');
    expect(sut.underShare('m', 'b', 1)).toBe(false);
    sut.ended('m', 'b');
    sut.ended('m', 'b');
    expect(sut.underShare('m', 'a', 1)).toBe(false);
  });
});
