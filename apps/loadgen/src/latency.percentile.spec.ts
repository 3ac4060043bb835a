import { percentile, sortedSamples, summarizeLatencies } from './latency.percentile';

describe('percentile', () => {
  const oneToHundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('uses the nearest rank on 1..100', () => {
    const sut = sortedSamples(oneToHundred);
    expect(percentile(sut, 50)).toBe(50);
    expect(percentile(sut, 90)).toBe(90);
    expect(percentile(sut, 99)).toBe(99);
    expect(percentile(sut, 100)).toBe(100);
    expect(percentile(sut, 0)).toBe(1);
  });

  it('rounds the rank up on small sample sets', () => {
    const sut = sortedSamples([10, 20, 30]);
    expect(percentile(sut, 50)).toBe(20);
    expect(percentile(sut, 99)).toBe(30);
    expect(percentile(sortedSamples([7]), 99)).toBe(7);
    const four = sortedSamples([4, 3, 2, 1]);
    expect(percentile(four, 26)).toBe(2); // rank ceil(1.04) = 2
    expect(percentile(four, 60)).toBe(3); // rank ceil(2.4) = 3
  });

  it('does not let floating point push the rank one too far', () => {
    // 0.07 × 100 is 7.000000000000001 in floating point; the 7th sample is the answer.
    expect(percentile(sortedSamples(oneToHundred), 7)).toBe(7);
  });

  it('sorts numerically, not as strings', () => {
    const sut = summarizeLatencies([100, 9, 10, 2, 1000]);
    expect(sut).toEqual({ p50: 10, p90: 1000, p99: 1000, max: 1000 });
  });

  it('returns null without samples and rejects a percentile outside [0, 100]', () => {
    expect(summarizeLatencies([])).toEqual({ p50: null, p90: null, p99: null, max: null });
    expect(() => percentile(sortedSamples([1]), 101)).toThrow(RangeError);
  });
});
