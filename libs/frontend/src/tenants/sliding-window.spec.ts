import { SlidingWindow } from './sliding-window';

describe('SlidingWindow', () => {
  it('sums the last minute only', () => {
    const sut = new SlidingWindow();
    sut.add(100, 3);
    sut.add(130, 2);
    expect(sut.total(130)).toBe(5);
    expect(sut.total(159)).toBe(5);
    expect(sut.total(160)).toBe(2);
    expect(sut.total(190)).toBe(0);
  });

  it('says when the oldest consumption has left enough room', () => {
    const sut = new SlidingWindow();
    sut.add(100, 5);
    sut.add(110, 5);
    // limit 10, 10 used: one more fits when the first 5 leave, at 160.
    expect(sut.retryAfter(120, 1, 10)).toBe(40);
    expect(sut.retryAfter(120, 6, 10)).toBe(50);
    expect(sut.retryAfter(120, 11, 10)).toBe(60);
  });

  it('takes a correction at the second it was charged, while inside the window', () => {
    const sut = new SlidingWindow();
    sut.add(100, 50);
    sut.add(100, -30, 120);
    expect(sut.total(120)).toBe(20);
    sut.add(100, -20, 170);
    expect(sut.total(170)).toBe(0);
  });
});
