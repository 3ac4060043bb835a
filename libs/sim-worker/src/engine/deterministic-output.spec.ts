import { embeddingVector, promptSeed, tokenText } from './deterministic-output';

const text = (prompt: string, n: number): string =>
  Array.from({ length: n }, (_, i) => tokenText(promptSeed(prompt), i)).join('');

describe('deterministic output', () => {
  it('answers the same prompt with the same words', () => {
    expect(text('hello', 20)).toBe(text('hello', 20));
  });

  it('answers different prompts differently', () => {
    expect(text('hello', 20)).not.toBe(text('hello!', 20));
  });

  it('separates words with single spaces and starts without one', () => {
    const sut = text('prompt', 10);
    expect(sut.startsWith(' ')).toBe(false);
    expect(sut.split(' ')).toHaveLength(10);
  });

  it('embeds a text as a fixed unit vector of the requested dimension', () => {
    const sut = embeddingVector('some input', 32);
    expect(sut).toHaveLength(32);
    expect(Math.hypot(...sut)).toBeCloseTo(1, 9);
    expect(embeddingVector('some input', 32)).toEqual(sut);
    expect(embeddingVector('other input', 32)).not.toEqual(sut);
  });
});
