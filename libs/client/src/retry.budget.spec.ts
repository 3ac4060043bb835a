import { RetryBudget } from './retry.budget';

describe('RetryBudget', () => {
  it('starts full and allows one retry per token', () => {
    const sut = new RetryBudget({ maxTokens: 3 });
    expect([sut.tryWithdraw(), sut.tryWithdraw(), sut.tryWithdraw()]).toEqual([true, true, true]);
    expect(sut.tryWithdraw()).toBe(false);
    expect(sut.available).toBe(0);
  });

  it('refills by depositPerSuccess: ten successes at 0.1 buy exactly one retry', () => {
    const sut = new RetryBudget({ maxTokens: 1, depositPerSuccess: 0.1 });
    expect(sut.tryWithdraw()).toBe(true);
    for (let i = 0; i < 9; i++) sut.deposit();
    expect(sut.tryWithdraw()).toBe(false);
    sut.deposit();
    expect(sut.available).toBe(1);
    expect(sut.tryWithdraw()).toBe(true);
  });

  it('never holds more than maxTokens', () => {
    const sut = new RetryBudget({ maxTokens: 2, depositPerSuccess: 0.5 });
    for (let i = 0; i < 100; i++) sut.deposit();
    expect(sut.available).toBe(2);
  });

  it('defaults to 10 tokens and 0.1 per success', () => {
    const sut = new RetryBudget();
    expect([sut.maxTokens, sut.depositPerSuccess, sut.available]).toEqual([10, 0.1, 10]);
  });

  it('rejects negative settings', () => {
    expect(() => new RetryBudget({ maxTokens: -1 })).toThrow(RangeError);
  });
});
