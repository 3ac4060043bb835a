import { NO_PRETENURING_FLAG, pretenuringChosen, turnOffPretenuring } from './pretenuring';

describe('pretenuringChosen', () => {
  it('sees the setting either way, in either spelling', () => {
    expect(pretenuringChosen(['--no-allocation-site-pretenuring'])).toBe(true);
    expect(pretenuringChosen(['--inspect', '--allocation-site-pretenuring'])).toBe(true);
    expect(pretenuringChosen(['--no_allocation_site_pretenuring'])).toBe(true);
  });

  it('sees nothing in other flags', () => {
    expect(pretenuringChosen([])).toBe(false);
    expect(pretenuringChosen(['--max-semi-space-size=16', '--allocation-site-pretenuringx'])).toBe(
      false,
    );
  });
});

describe('turnOffPretenuring', () => {
  // The module object itself, which the source's named import reads at each call.
  const v8 = jest.requireActual<typeof import('node:v8')>('node:v8');
  const set = jest.spyOn(v8, 'setFlagsFromString').mockImplementation(() => undefined);
  afterEach(() => set.mockClear());
  afterAll(() => set.mockRestore());

  it("leaves an operator's own choice alone", () => {
    expect(turnOffPretenuring(['--allocation-site-pretenuring'])).toBe(false);
    expect(set).not.toHaveBeenCalled();
  });

  it("sets V8's flag otherwise", () => {
    expect(turnOffPretenuring(['--max-semi-space-size=16'])).toBe(true);
    expect(set).toHaveBeenCalledWith(NO_PRETENURING_FLAG);
  });
});
