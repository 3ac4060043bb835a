import { RouterQueue, Waiter } from './router-queue';

const waiter = (promptTokens: number): Waiter<string> => ({
  promptTokens,
  resolve: jest.fn(),
  reject: jest.fn(),
});

describe('RouterQueue', () => {
  let sut: RouterQueue<string>;

  beforeEach(() => {
    sut = new RouterQueue<string>();
  });

  const drain = (): number[] => {
    const out: number[] = [];
    for (let w = sut.shift(); w; w = sut.shift()) out.push(w.promptTokens);
    return out;
  };

  it('starts empty', () => {
    expect(sut.size).toBe(0);
    expect(sut.peek()).toBeUndefined();
    expect(sut.shift()).toBeUndefined();
  });

  it('hands waiters out in arrival order', () => {
    [1, 2, 3, 4].forEach((n) => sut.push(waiter(n)));
    expect(sut.size).toBe(4);
    expect(sut.peek()?.promptTokens).toBe(1);
    expect(drain()).toEqual([1, 2, 3, 4]);
    expect(sut.size).toBe(0);
  });

  it('serves earliest deadline first, arrival order among equal ones, waiters without one last', () => {
    const due = (promptTokens: number, deadlineMs?: number): Waiter<string> => ({
      ...waiter(promptTokens),
      deadlineMs,
    });
    sut.push(due(1, 500));
    sut.push(due(2));
    sut.push(due(3, 300));
    const removeFour = sut.push(due(4, 500));
    sut.push(due(5, 100));
    sut.push(due(6));
    expect(sut.peek()?.promptTokens).toBe(5);
    expect(removeFour()).toBe(true);
    sut.push(due(7, 400));
    expect(drain()).toEqual([5, 3, 7, 1, 2, 6]);
  });

  it('removes a waiter from the middle and keeps the others in order', () => {
    sut.push(waiter(1));
    const removeTwo = sut.push(waiter(2));
    sut.push(waiter(3));
    expect(removeTwo()).toBe(true);
    expect(sut.size).toBe(2);
    expect(drain()).toEqual([1, 3]);
  });

  it('removes the first and the last waiter', () => {
    const removeFirst = sut.push(waiter(1));
    sut.push(waiter(2));
    const removeLast = sut.push(waiter(3));
    expect(removeFirst()).toBe(true);
    expect(removeLast()).toBe(true);
    expect(sut.peek()?.promptTokens).toBe(2);
    sut.push(waiter(4));
    expect(drain()).toEqual([2, 4]);
  });

  it('accepts new waiters after it was emptied by removal', () => {
    const remove = sut.push(waiter(1));
    remove();
    expect(sut.size).toBe(0);
    sut.push(waiter(2));
    expect(drain()).toEqual([2]);
  });

  it('answers false from a remover whose waiter was already shifted', () => {
    const remove = sut.push(waiter(1));
    sut.push(waiter(2));
    expect(sut.shift()?.promptTokens).toBe(1);
    expect(remove()).toBe(false);
    expect(sut.size).toBe(1);
    expect(drain()).toEqual([2]);
  });

  it('answers false from a remover called twice and does not disturb the queue', () => {
    sut.push(waiter(1));
    const remove = sut.push(waiter(2));
    sut.push(waiter(3));
    expect(remove()).toBe(true);
    expect(remove()).toBe(false);
    expect(sut.size).toBe(2);
    expect(drain()).toEqual([1, 3]);
  });

  it('stays consistent through many interleaved pushes and removals', () => {
    const removers = new Map<number, () => boolean>();
    for (let i = 0; i < 100; i++) removers.set(i, sut.push(waiter(i)));
    for (let i = 0; i < 100; i += 3) removers.get(i)?.();
    const expected = [...removers.keys()].filter((i) => i % 3 !== 0);
    expect(sut.size).toBe(expected.length);
    expect(drain()).toEqual(expected);
  });
});
