import { gcPhasesChosen, OVERLAPPING_GC_PHASES_FLAG, scavengeWhileMarking } from './gc-phases';

describe('gcPhasesChosen', () => {
  it('sees the setting either way, in either spelling, and the collector that needs it', () => {
    expect(gcPhasesChosen(['--separate-gc-phases'])).toBe(true);
    expect(gcPhasesChosen(['--inspect', '--no_separate_gc_phases'])).toBe(true);
    expect(gcPhasesChosen(['--minor-ms'])).toBe(true);
  });

  it('sees nothing in other flags', () => {
    expect(gcPhasesChosen([])).toBe(false);
    expect(gcPhasesChosen(['--max-semi-space-size=16', '--separate-gc-phasesx'])).toBe(false);
  });
});

describe('scavengeWhileMarking', () => {
  // The module object itself, which the source's named import reads at each call.
  const v8 = jest.requireActual<typeof import('node:v8')>('node:v8');
  const set = jest.spyOn(v8, 'setFlagsFromString').mockImplementation(() => undefined);
  afterEach(() => set.mockClear());
  afterAll(() => set.mockRestore());

  it("leaves an operator's own choice alone", () => {
    expect(scavengeWhileMarking(['--separate-gc-phases'])).toBe(false);
    expect(set).not.toHaveBeenCalled();
  });

  it("sets V8's flag otherwise", () => {
    expect(scavengeWhileMarking(['--max-semi-space-size=16'])).toBe(true);
    expect(set).toHaveBeenCalledWith(OVERLAPPING_GC_PHASES_FLAG);
  });
});
