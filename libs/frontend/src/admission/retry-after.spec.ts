import { FrontendConfig } from '../config/frontend-config';
import { BusySpells } from '../worker-monitor/busy-spells';
import { RetryAfter, retryAfterSecsFor } from './retry-after';

describe('retryAfterSecsFor', () => {
  it.each([
    [undefined, 1],
    [0, 1],
    [1, 1],
    [1000, 1],
    [1001, 2],
    [2999, 3],
    [59_000, 59],
    [60_000, 60],
    [60_001, 60],
    [3_600_000, 60],
  ])('turns an expected wait of %p ms into %i s (rounded up, within [1, 60])', (ms, secs) => {
    expect(retryAfterSecsFor(ms)).toBe(secs);
  });
});

describe('RetryAfter', () => {
  const spells = (waitMs: number | undefined) =>
    ({ expectedWaitMs: jest.fn(() => waitMs) }) as unknown as BusySpells;
  const sut = (retryAfterSecs: number | 'auto', waitMs?: number) =>
    new RetryAfter(new FrontendConfig({ retryAfterSecs }), spells(waitMs));

  it('sends the configured seconds whatever the model, and none for 0', () => {
    expect(sut(1).of('m')).toBe('1');
    expect(sut(7, 30_000).of('m')).toBe('7');
    expect(sut(0).of('m')).toBeNull();
  });

  it('with auto, sends the model’s measured estimate, clamped', () => {
    expect(sut('auto', 2100).of('m')).toBe('3');
    expect(sut('auto', 10 * 60_000).of('m')).toBe('60');
    expect(sut('auto', 0).of('m')).toBe('1');
  });

  it('with auto, sends 1 before anything is measured, or without a model name', () => {
    expect(sut('auto', undefined).of('m')).toBe('1');
    expect(sut('auto', 5000).of(undefined)).toBe('1');
  });
});
