import {
  YOUNG_GENERATION_FLAG,
  youngGenerationAdvice,
  youngGenerationCapped,
} from './young-generation';

describe('youngGenerationCapped', () => {
  it('sees the cap among node arguments, with any value', () => {
    expect(youngGenerationCapped([YOUNG_GENERATION_FLAG])).toBe(true);
    expect(youngGenerationCapped(['--cpu-prof', '--max-semi-space-size=64'])).toBe(true);
    expect(youngGenerationCapped(['--max-young-generation-size=48'])).toBe(true);
  });

  it('sees the cap in NODE_OPTIONS, among other options', () => {
    expect(youngGenerationCapped([], '--enable-source-maps  --max_semi_space_size=8')).toBe(true);
  });

  it('finds none without it, and is not fooled by a longer flag name', () => {
    expect(youngGenerationCapped([], '')).toBe(false);
    expect(youngGenerationCapped(['--max-old-space-size=512'], '--trace-gc')).toBe(false);
    expect(youngGenerationCapped(['--max-semi-space-size-extra=1'])).toBe(false);
  });
});

describe('youngGenerationAdvice', () => {
  it('names the flag to add when the cap is missing, and says nothing when it is there', () => {
    expect(youngGenerationAdvice([], '')).toContain(`NODE_OPTIONS=${YOUNG_GENERATION_FLAG}`);
    expect(youngGenerationAdvice([], YOUNG_GENERATION_FLAG)).toBeNull();
  });
});
