import { LogThrottle } from './log-throttle';

describe('LogThrottle', () => {
  let lines: string[];
  let sut: LogThrottle;

  beforeEach(() => {
    lines = [];
    sut = new LogThrottle((l) => lines.push(l), 5000, 1, 'transitions');
  });

  it('writes one line per key and interval, then the newest one with the count left out', () => {
    for (let i = 0; i < 200; i++) sut.line('w1', `w1 is now ${i % 2 ? 'free' : 'BUSY'}`, i);
    expect(lines).toEqual(['w1 is now BUSY']);
    sut.flush(4999);
    expect(lines).toHaveLength(1);
    sut.flush(5000);
    expect(lines).toEqual(['w1 is now BUSY', 'w1 is now free (198 more transitions suppressed)']);
    sut.flush(20000);
    expect(lines).toHaveLength(2); // nothing pending
    expect(sut.size).toBe(0); // and the key is forgotten
  });

  it('adds the count to the next line that may be written', () => {
    sut.line('w1', 'a', 0);
    sut.line('w1', 'b', 1);
    sut.line('w1', 'c', 6000);
    expect(lines).toEqual(['a', 'c (1 more transition suppressed)']);
  });

  it('keeps keys apart and allows a burst', () => {
    sut = new LogThrottle((l) => lines.push(l), 1000, 3, 'lines');
    for (let i = 0; i < 5; i++) sut.line('joins', `j${i}`, 0);
    sut.line('other', 'o', 0);
    expect(lines).toEqual(['j0', 'j1', 'j2', 'o']);
    sut.flush(1000);
    expect(lines).toEqual(['j0', 'j1', 'j2', 'o', 'j4 (1 more line suppressed)']);
  });

  it('drops the pending line of a forgotten key', () => {
    sut.line('w1', 'a', 0);
    sut.line('w1', 'b', 1);
    sut.forget('w1');
    sut.flush(10000);
    expect(lines).toEqual(['a']);
  });
});
