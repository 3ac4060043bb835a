import { backoffDelayMs, parseRetryAfterMs, retryDelayMs } from './retry.policy';

const settings = { baseDelayMs: 100, maxDelayMs: 1000 };

describe('backoffDelayMs (capped exponential, full jitter)', () => {
  it('is random × min(cap, base × 2^retry)', () => {
    expect(backoffDelayMs(0, settings, () => 0.5)).toBe(50);
    expect(backoffDelayMs(1, settings, () => 0.5)).toBe(100);
    expect(backoffDelayMs(2, settings, () => 0.25)).toBe(100);
    expect(backoffDelayMs(3, settings, () => 0.999)).toBeCloseTo(799.2);
  });

  it('spans the whole window: 0 at random 0, just under the ceiling at random → 1', () => {
    expect(backoffDelayMs(2, settings, () => 0)).toBe(0);
    expect(backoffDelayMs(2, settings, () => 0.999999)).toBeCloseTo(400, 3);
  });

  it('never grows past the cap', () => {
    expect(backoffDelayMs(4, settings, () => 0.5)).toBe(500);
    expect(backoffDelayMs(30, settings, () => 0.5)).toBe(500);
    expect(backoffDelayMs(2000, settings, () => 1)).toBe(1000);
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2025-06-01T12:00:00Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfterMs('1', now)).toBe(1000);
    expect(parseRetryAfterMs(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfterMs('0', now)).toBe(0);
    expect(parseRetryAfterMs('1.5', now)).toBe(1500);
  });

  it('reads an HTTP date relative to now; a past date is 0', () => {
    expect(parseRetryAfterMs('Sun, 01 Jun 2025 12:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfterMs('Sun, 01 Jun 2025 11:59:00 GMT', now)).toBe(0);
  });

  it('ignores an absent or unparsable header', () => {
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
    expect(parseRetryAfterMs('', now)).toBeUndefined();
    expect(parseRetryAfterMs('soon', now)).toBeUndefined();
    expect(parseRetryAfterMs('-1', now)).toBeUndefined();
  });

  it('takes the first of repeated headers', () => {
    expect(parseRetryAfterMs(['2', '9'], now)).toBe(2000);
  });
});

describe('retryDelayMs', () => {
  it('is the jittered backoff when it exceeds Retry-After', () => {
    expect(retryDelayMs(3, 200, settings, () => 0.5)).toBe(400);
  });

  it('is never less than Retry-After', () => {
    expect(retryDelayMs(0, 1000, settings, () => 0.5)).toBe(1000);
    expect(retryDelayMs(0, 1000, settings, () => 0)).toBe(1000);
  });

  it('is the backoff alone without Retry-After', () => {
    expect(retryDelayMs(1, undefined, settings, () => 0.1)).toBeCloseTo(20);
  });
});
