import { decodeStepMs, prefillStepMs, stepDurationMs } from './step-timing';

describe('step timing (Dynamo mocker model)', () => {
  it('costs nothing to prefill zero tokens', () => {
    expect(prefillStepMs(0)).toBe(0);
  });

  it('prefills T tokens in 4.209989e-7*T^2 + 1.518344e-2*T + 16.50142 ms', () => {
    expect(prefillStepMs(1)).toBeCloseTo(16.51660386, 6);
    expect(prefillStepMs(1000)).toBeCloseTo(32.1058589, 6);
    expect(prefillStepMs(8192)).toBeCloseTo(0.4209989e-6 * 8192 ** 2 + 124.3827 + 16.50142, 3);
  });

  it('decodes in -25.74u^2 + 54.01u + 5.74 ms at utilisation u', () => {
    expect(decodeStepMs(0)).toBeCloseTo(5.74, 6);
    expect(decodeStepMs(0.5)).toBeCloseTo(26.31, 6);
    expect(decodeStepMs(1)).toBeCloseTo(34.01, 6);
  });

  it('never decodes faster than 1 ms', () => {
    expect(decodeStepMs(3)).toBe(1);
  });

  it('adds prefill and decode and divides by the speedup', () => {
    const both = prefillStepMs(1000) + decodeStepMs(0.5);
    expect(stepDurationMs(1000, true, 0.5, 1)).toBeCloseTo(both, 9);
    expect(stepDurationMs(1000, true, 0.5, 4)).toBeCloseTo(both / 4, 9);
    expect(stepDurationMs(1000, false, 0.5, 1)).toBeCloseTo(prefillStepMs(1000), 9);
    expect(stepDurationMs(0, true, 0.5, 1)).toBeCloseTo(decodeStepMs(0.5), 9);
  });

  it('takes no time at all with speedup 0', () => {
    expect(stepDurationMs(8192, true, 0.9, 0)).toBe(0);
  });
});
