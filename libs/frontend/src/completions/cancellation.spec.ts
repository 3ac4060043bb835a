import { Cancellation } from './cancellation';

describe('Cancellation', () => {
  it('aborts the call in flight and the signal when the client goes away', () => {
    const sut = new Cancellation();
    const abort = jest.fn();
    sut.onCancel(abort);
    expect(abort).not.toHaveBeenCalled();
    sut.cancel();
    expect([abort.mock.calls.length, sut.controller.signal.aborted, sut.cancelled]).toEqual([
      1,
      true,
      true,
    ]);
  });

  it('aborts a call set up after the client went away at once', () => {
    const sut = new Cancellation();
    sut.cancel();
    const abort = jest.fn();
    sut.onCancel(abort);
    expect(abort).toHaveBeenCalledTimes(1);
  });
});
