import {
  concurrentMarkingChosen,
  markOnMainThreadOnOneCpu,
  NO_CONCURRENT_MARKING_FLAG,
} from './concurrent-marking';

describe('concurrentMarkingChosen', () => {
  it('sees the setting either way, in either spelling, and all-GC-on-one-thread', () => {
    expect(concurrentMarkingChosen(['--no-concurrent-marking'])).toBe(true);
    expect(concurrentMarkingChosen(['--inspect', '--concurrent_marking'])).toBe(true);
    expect(concurrentMarkingChosen(['--single-threaded-gc'])).toBe(true);
  });

  it('sees nothing in other flags', () => {
    expect(concurrentMarkingChosen([])).toBe(false);
    expect(concurrentMarkingChosen(['--max-semi-space-size=16', '--concurrent-markingx'])).toBe(
      false,
    );
  });
});

describe('markOnMainThreadOnOneCpu', () => {
  // The module object itself, which the source's named import reads at each call.
  const v8 = jest.requireActual<typeof import('node:v8')>('node:v8');
  const set = jest.spyOn(v8, 'setFlagsFromString').mockImplementation(() => undefined);
  afterEach(() => set.mockClear());
  afterAll(() => set.mockRestore());

  it("sets V8's flag on one CPU", () => {
    expect(markOnMainThreadOnOneCpu(['--max-semi-space-size=16'], 1)).toBe(true);
    expect(set).toHaveBeenCalledWith(NO_CONCURRENT_MARKING_FLAG);
  });

  it('changes nothing with more than one CPU', () => {
    expect(markOnMainThreadOnOneCpu([], 2)).toBe(false);
    expect(set).not.toHaveBeenCalled();
  });

  it("leaves an operator's own choice alone", () => {
    expect(markOnMainThreadOnOneCpu(['--concurrent-marking'], 1)).toBe(false);
    expect(set).not.toHaveBeenCalled();
  });
});
