import { FrontendConfig } from '../config/frontend-config';
import { DEFAULT_PRIORITY_FACTORS } from '../config/priority';
import { NO_THRESHOLDS } from './busy-thresholds';
import { classThresholds, scaleThresholds } from './class-thresholds';
import { ThresholdsService } from './thresholds.service';

const T = {
  activeDecodeBlocks: 0.9,
  activePrefillTokens: 4096,
  activePrefillTokensFrac: 1.5,
  waitingRequests: 8,
  admissionControl: 'token-capacity',
  ttftSloMs: 500,
} as const;

describe('thresholds per priority class (docs/security.md#priority-classes-who-may-set-x-sluice-priority)', () => {
  it('multiplies every threshold by the factor, flooring the integer ones; the mode stays', () => {
    expect(scaleThresholds(T, 0.8)).toEqual({
      activeDecodeBlocks: 0.9 * 0.8,
      activePrefillTokens: 3276, // floor(3276.8)
      activePrefillTokensFrac: 1.5 * 0.8,
      waitingRequests: 6, // floor(6.4)
      admissionControl: 'token-capacity',
      ttftSloMs: 400, // a tighter objective for sheddable
    });
    expect(scaleThresholds(T, 1.2)).toMatchObject({
      activePrefillTokens: 4915, // floor(4915.2)
      waitingRequests: 9, // floor(9.6)
      activePrefillTokensFrac: 1.5 * 1.2,
      ttftSloMs: 600, // a looser one for critical
    });
  });

  it('caps the decode ratio at 1', () => {
    expect(scaleThresholds(T, 1.2).activeDecodeBlocks).toBe(1);
    expect(scaleThresholds({ ...T, activeDecodeBlocks: 0.5 }, 1.2).activeDecodeBlocks).toBe(0.6);
  });

  it('floors as arithmetic means it, not as binary floating point rounds it', () => {
    // 0.29 x 100 is 28.999999999999996 in binary; the threshold is 29 all the same.
    expect(scaleThresholds({ ...T, activePrefillTokens: 100 }, 0.29).activePrefillTokens).toBe(29);
  });

  it('leaves unset thresholds unset, and a factor of 1 changes nothing', () => {
    expect(scaleThresholds(NO_THRESHOLDS, 0.5)).toEqual(NO_THRESHOLDS);
    expect(scaleThresholds(T, 1)).toBe(T);
  });

  it('gives standard the configured thresholds and derives the other classes from them', () => {
    const sut = classThresholds(T, DEFAULT_PRIORITY_FACTORS);
    expect(sut.standard).toBe(T);
    expect(sut.sheddable).toEqual(scaleThresholds(T, 0.8));
    expect(sut.critical).toEqual(scaleThresholds(T, 1.2));
  });

  it('follows per-model overrides in ThresholdsService.byClass', () => {
    const config = new FrontendConfig({
      thresholds: { activeDecodeBlocks: 0.5 },
      priorityFactors: { sheddable: 0.5, critical: 1.5 },
    });
    const sut = new ThresholdsService(config);
    expect(sut.byClass('m').sheddable.activeDecodeBlocks).toBe(0.25);
    expect(sut.byClass('m').critical.activeDecodeBlocks).toBe(0.75);
    sut.setOverride('m', { activeDecodeBlocks: 0.8 });
    expect(sut.byClass('m').standard.activeDecodeBlocks).toBe(0.8);
    expect(sut.byClass('m').sheddable.activeDecodeBlocks).toBe(0.4);
    expect(sut.byClass('m').critical.activeDecodeBlocks).toBe(1);
    sut.replaceOverrides(new Map());
    expect(sut.byClass('m').sheddable.activeDecodeBlocks).toBe(0.25);
  });
});
