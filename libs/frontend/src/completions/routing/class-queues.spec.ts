import { ClassQueues } from './class-queues';
import { Waiter } from './router-queue';

const waiter = (promptTokens: number): Waiter<string> => ({
  promptTokens,
  resolve: jest.fn(),
  reject: jest.fn(),
});

describe('ClassQueues', () => {
  let sut: ClassQueues<string>;

  beforeEach(() => {
    sut = new ClassQueues<string>();
    sut.push('sheddable', waiter(1));
    sut.push('standard', waiter(2));
    sut.push('sheddable', waiter(3));
    sut.push('critical', waiter(4));
  });

  it('counts the waiters a newcomer of each class may not overtake', () => {
    expect(sut.size).toBe(4);
    expect(sut.aheadOf('critical')).toBe(1);
    expect(sut.aheadOf('standard')).toBe(2);
    expect(sut.aheadOf('sheddable')).toBe(4);
  });

  it('keeps each class in arrival order', () => {
    expect(sut.of('sheddable').shift()?.promptTokens).toBe(1);
    expect(sut.of('sheddable').shift()?.promptTokens).toBe(3);
    expect(sut.of('sheddable').shift()).toBeUndefined();
  });

  it('gives up the newest waiter of the lowest class below the newcomer, and none of its own', () => {
    expect(sut.evictBelow('critical')?.promptTokens).toBe(3);
    expect(sut.evictBelow('standard')?.promptTokens).toBe(1);
    expect(sut.evictBelow('standard')).toBeUndefined();
    expect(sut.evictBelow('critical')?.promptTokens).toBe(2);
    expect(sut.evictBelow('sheddable')).toBeUndefined();
    expect(sut.evictBelow('critical')).toBeUndefined();
    expect(sut.size).toBe(1);
  });
});

describe('ClassQueues fair eviction', () => {
  const of = (tenant: string, weight: number): Waiter<string> => ({
    promptTokens: 1,
    tenant,
    weight,
    resolve: jest.fn(),
    reject: jest.fn(),
  });

  it('makes room for a newcomer by refusing the tenant furthest over its share', () => {
    const sut = new ClassQueues<string>();
    for (let i = 0; i < 4; i++) sut.push('standard', of('a', 1));
    expect(sut.evictOverShare('standard', 'b', 1)?.tenant).toBe('a');
    expect(sut.size).toBe(3);
  });

  it('refuses the newcomer when its own tenant is the one over its share', () => {
    const sut = new ClassQueues<string>();
    for (let i = 0; i < 3; i++) sut.push('standard', of('a', 1));
    sut.push('standard', of('b', 1));
    expect(sut.evictOverShare('standard', 'a', 1)).toBeUndefined();
    // b with one waiter and a weight of 1 would be at 2 against a's 3: a gives way.
    expect(sut.evictOverShare('standard', 'b', 1)?.tenant).toBe('a');
    // a at 2, b at 2 counting the newcomer: the newcomer is refused.
    expect(sut.evictOverShare('standard', 'b', 1)).toBeUndefined();
    expect(sut.evictOverShare('critical', 'b', 1)).toBeUndefined();
  });
});
