import { FairQueue } from './fair-queue';
import { Waiter } from './router-queue';

const waiter = (tenant: string, weight: number, promptTokens = 1): Waiter<string> => ({
  promptTokens,
  tenant,
  weight,
  resolve: jest.fn(),
  reject: jest.fn(),
});

/** Serves `n` waiters, refilling each tenant so that it stays backlogged; counts per tenant. */
function serveBacklogged(sut: FairQueue<string>, tenants: Record<string, number>, n: number) {
  const served: Record<string, number> = {};
  for (const [t, w] of Object.entries(tenants)) {
    served[t] = 0;
    for (let i = 0; i < 5; i++) sut.push(waiter(t, w));
  }
  for (let i = 0; i < n; i++) {
    const w = sut.shift() as Waiter<string>;
    const t = w.tenant as string;
    served[t]++;
    sut.push(waiter(t, tenants[t]));
  }
  return served;
}

describe('FairQueue', () => {
  let sut: FairQueue<string>;

  beforeEach(() => {
    sut = new FairQueue<string>();
  });

  it('shares between two backlogged tenants in proportion 3:1 to their weights', () => {
    const served = serveBacklogged(sut, { a: 3, b: 1 }, 400);
    const ratio = served.a / served.b;
    expect(ratio).toBeGreaterThanOrEqual(2.7);
    expect(ratio).toBeLessThanOrEqual(3.3);
  });

  it('shares equally between tenants of equal weight', () => {
    const served = serveBacklogged(sut, { a: 1, b: 1, c: 1 }, 300);
    expect(served).toEqual({ a: 100, b: 100, c: 100 });
  });

  it('gives a lone tenant everything, in arrival order', () => {
    for (let i = 1; i <= 4; i++) sut.push(waiter('a', 1, i));
    const order = [1, 2, 3, 4].map(() => sut.shift()?.promptTokens);
    expect(order).toEqual([1, 2, 3, 4]);
    expect(sut.shift()).toBeUndefined();
    expect(sut.size).toBe(0);
  });

  it('is work-conserving: what one tenant leaves goes to the other', () => {
    sut.push(waiter('a', 3));
    for (let i = 0; i < 4; i++) sut.push(waiter('b', 1));
    const tenants = [0, 1, 2, 3, 4].map(() => sut.shift()?.tenant);
    expect(tenants.filter((t) => t === 'b')).toHaveLength(4);
    expect(tenants.filter((t) => t === 'a')).toHaveLength(1);
  });

  it('banks no credit for a tenant that had nothing waiting', () => {
    for (let i = 0; i < 10; i++) sut.push(waiter('a', 1));
    for (let i = 0; i < 6; i++) sut.shift();
    // b arrives late: it is served alternately with a, not six times in a row.
    for (let i = 0; i < 6; i++) sut.push(waiter('b', 1));
    const tenants = [0, 1, 2, 3].map(() => sut.shift()?.tenant);
    expect(tenants.filter((t) => t === 'b')).toHaveLength(2);
  });

  it('peek shows the waiter shift takes', () => {
    sut.push(waiter('a', 1, 1));
    sut.push(waiter('b', 1, 2));
    sut.shift();
    expect(sut.peek()?.promptTokens).toBe(2);
    expect(sut.shift()?.promptTokens).toBe(2);
  });

  it('a removed waiter leaves its tenant queue', () => {
    const remove = sut.push(waiter('a', 1, 1));
    sut.push(waiter('b', 1, 2));
    expect(remove()).toBe(true);
    expect(remove()).toBe(false);
    expect(sut.size).toBe(1);
    expect(sut.shift()?.promptTokens).toBe(2);
  });

  it('pops the newest waiter of the tenant furthest over its share', () => {
    for (let i = 1; i <= 3; i++) sut.push(waiter('a', 3, i));
    for (let i = 4; i <= 5; i++) sut.push(waiter('b', 1, i));
    expect(sut.heaviest()).toEqual({ tenant: 'b', share: 2 });
    expect(sut.waitingOf('a')).toBe(3);
    expect(sut.pop()?.promptTokens).toBe(5);
    expect(sut.size).toBe(4);
  });
});
