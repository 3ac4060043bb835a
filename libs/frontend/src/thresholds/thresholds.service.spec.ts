import { FrontendConfig } from '../config/frontend-config';
import { ThresholdOverride } from './busy-thresholds';
import { ThresholdsService } from './thresholds.service';

const GLOBAL = {
  activeDecodeBlocks: 0.9,
  activePrefillTokens: 4096,
  activePrefillTokensFrac: null,
  waitingRequests: 16,
  admissionControl: 'token-capacity',
  ttftSloMs: null,
} as const;

describe('ThresholdsService', () => {
  let sut: ThresholdsService;

  beforeEach(() => {
    sut = new ThresholdsService(new FrontendConfig({ thresholds: GLOBAL }));
  });

  it('applies the global flags to a model without an override', () => {
    expect(sut.globalThresholds()).toEqual(GLOBAL);
    expect(sut.effective('m')).toEqual(GLOBAL);
  });

  it('has every threshold unset by default', () => {
    const bare = new ThresholdsService(new FrontendConfig());
    expect(bare.effective('m')).toEqual({
      activeDecodeBlocks: null,
      activePrefillTokens: null,
      activePrefillTokensFrac: null,
      waitingRequests: null,
      admissionControl: 'none',
      ttftSloMs: null,
    });
  });

  it('leaves a threshold the configuration does not mention unset', () => {
    const partial = new FrontendConfig({ thresholds: { activeDecodeBlocks: 0.5 } });
    expect(new ThresholdsService(partial).effective('m')).toEqual({
      activeDecodeBlocks: 0.5,
      activePrefillTokens: null,
      activePrefillTokensFrac: null,
      waitingRequests: null,
      admissionControl: 'none',
      ttftSloMs: null,
    });
  });

  it('merges a per-model override over the global flags', () => {
    sut.setOverride('m', { activeDecodeBlocks: 0.5, activePrefillTokensFrac: 1.2 });
    expect(sut.effective('m')).toEqual({
      activeDecodeBlocks: 0.5,
      activePrefillTokens: 4096,
      activePrefillTokensFrac: 1.2,
      waitingRequests: 16,
      admissionControl: 'token-capacity',
      ttftSloMs: null,
    });
    expect(sut.effective('other')).toEqual(GLOBAL);
  });

  it('merges a per-model TTFT objective and scales it per class', () => {
    sut.setOverride('m', { ttftSloMs: 500 });
    expect(sut.effective('m')).toEqual({ ...GLOBAL, ttftSloMs: 500 });
    expect(sut.byClass('m').critical.ttftSloMs).toBe(600);
    expect(sut.byClass('m').sheddable.ttftSloMs).toBe(400);
    expect(sut.effective('other').ttftSloMs).toBeNull();
  });

  it('merges a per-model waiting-requests threshold, 0 included, and falls back on null', () => {
    sut.setOverride('m', { waitingRequests: 3 });
    expect(sut.effective('m')).toEqual({ ...GLOBAL, waitingRequests: 3 });
    sut.setOverride('m', { waitingRequests: 0 });
    expect(sut.effective('m').waitingRequests).toBe(0);
    sut.setOverride('m', { waitingRequests: null, activePrefillTokens: 1 });
    expect(sut.effective('m')).toEqual({ ...GLOBAL, activePrefillTokens: 1 });
  });

  it('falls back to the global flag for a null or absent override value', () => {
    sut.setOverride('m', {
      activeDecodeBlocks: null,
      activePrefillTokensFrac: null,
      waitingRequests: null,
    });
    expect(sut.effective('m')).toEqual(GLOBAL);
  });

  it('takes the admission mode from the global flag, a model’s own mode over it', () => {
    expect(sut.admissionControl('m')).toBe('token-capacity');
    sut.setOverride('m', { admissionControl: 'shadow' });
    expect(sut.admissionControl('m')).toBe('shadow');
    expect(sut.effective('m')).toEqual({ ...GLOBAL, admissionControl: 'shadow' });
    expect(sut.admissionControl('other')).toBe('token-capacity');
    sut.setOverride('m', { admissionControl: null, activePrefillTokens: 1 });
    expect(sut.admissionControl('m')).toBe('token-capacity');
    const global = new ThresholdsService(new FrontendConfig({ admissionControl: 'shadow' }));
    expect(global.admissionControl('m')).toBe('shadow');
    expect(global.globalThresholds().admissionControl).toBe('shadow');
  });

  it('keeps an override of 0 (0 is a threshold, not "unset")', () => {
    sut.setOverride('m', { activeDecodeBlocks: 0, activePrefillTokens: 0 });
    expect(sut.effective('m')).toMatchObject({ activeDecodeBlocks: 0, activePrefillTokens: 0 });
  });

  it('serves the new value after setOverride even once the old one was read', () => {
    expect(sut.effective('m').activePrefillTokens).toBe(4096);
    sut.setOverride('m', { activePrefillTokens: 10 });
    expect(sut.effective('m').activePrefillTokens).toBe(10);
    sut.setOverride('m', { activePrefillTokens: 20 });
    expect(sut.effective('m').activePrefillTokens).toBe(20);
  });

  it('returns to the global flags after setOverride(model, undefined)', () => {
    sut.setOverride('m', { activePrefillTokens: 10 });
    expect(sut.effective('m').activePrefillTokens).toBe(10);
    sut.setOverride('m', undefined);
    expect(sut.effective('m')).toEqual(GLOBAL);
    expect(sut.override('m')).toBeUndefined();
    expect(sut.modelsWithOverrides()).toEqual([]);
  });

  it('replaceOverrides drops models absent from the new set and adds the new ones', () => {
    sut.setOverride('a', { activePrefillTokens: 1 });
    expect(sut.effective('a').activePrefillTokens).toBe(1);
    expect(sut.effective('b').activePrefillTokens).toBe(4096);

    sut.replaceOverrides(new Map<string, ThresholdOverride>([['b', { activePrefillTokens: 2 }]]));

    expect(sut.effective('a')).toEqual(GLOBAL);
    expect(sut.effective('b').activePrefillTokens).toBe(2);
    expect(sut.modelsWithOverrides()).toEqual(['b']);
  });

  it('tells every listener which model changed', () => {
    const first = jest.fn();
    const second = jest.fn();
    sut.onChange(first);
    sut.onChange(second);

    sut.setOverride('m', { activePrefillTokens: 1 });

    expect(first).toHaveBeenCalledWith('m');
    expect(second).toHaveBeenCalledWith('m');
  });

  it('lets a listener read the new value while being notified', () => {
    const seen: Array<number | null> = [];
    sut.onChange((model) => seen.push(sut.effective(model ?? '').activePrefillTokens));
    sut.effective('m');
    sut.setOverride('m', { activePrefillTokens: 7 });
    expect(seen).toEqual([7]);
  });

  it('replaceOverrides notifies both the removed and the added models', () => {
    sut.setOverride('a', { activePrefillTokens: 1 });
    const listener = jest.fn();
    sut.onChange(listener);

    sut.replaceOverrides(new Map([['b', { activePrefillTokens: 2 }]]));

    expect(listener.mock.calls.map(([m]) => m as string).sort()).toEqual(['a', 'b']);
  });
});
