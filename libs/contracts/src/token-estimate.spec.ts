import { estimatePromptTokens, estimateTextTokens } from './token-estimate';

describe('estimateTextTokens', () => {
  const sut = estimateTextTokens;

  it.each([
    ['', 0],
    ['a', 1],
    ['abcd', 1],
    ['abcde', 2],
    ['x'.repeat(4000), 1000],
    ['x'.repeat(4001), 1001],
  ])('counts %j as ceil(length / 4)', (text, tokens) => {
    expect(sut(text)).toBe(tokens);
  });

  it('counts UTF-16 code units, so one emoji (two units) is one token', () => {
    expect(sut('😀😀😀')).toBe(2);
  });
});

describe('estimatePromptTokens', () => {
  const sut = estimatePromptTokens;

  it('adds 4 tokens of framing per chat message to its text', () => {
    const body = {
      messages: [
        { role: 'system', content: 'abcd' },
        { role: 'user', content: 'hello' },
      ],
    };
    expect(sut(body)).toBe(4 + 1 + (4 + 2));
  });

  it('charges framing for messages without content', () => {
    expect(sut({ messages: [{ role: 'assistant' }, null, 'x'] })).toBe(12);
  });

  it('counts the text parts of multimodal content and ignores the others', () => {
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'abcdefgh' },
            { type: 'image_url', image_url: { url: 'http://img' } },
            { type: 'text', text: 'a' },
          ],
        },
      ],
    };
    expect(sut(body)).toBe(4 + 2 + 1);
  });

  it('counts a completion prompt string', () => {
    expect(sut({ prompt: 'abcdefghi' })).toBe(3);
  });

  it('counts a pre-tokenised prompt one token per id', () => {
    expect(sut({ prompt: [101, 2023, 2003, 102] })).toBe(4);
  });

  it('sums batched prompts of strings and of token-id arrays', () => {
    expect(sut({ prompt: ['abcd', 'abcde'] })).toBe(3);
    expect(sut({ prompt: [[1, 2, 3], [4]] })).toBe(4);
  });

  it('counts embedding input like a prompt', () => {
    expect(sut({ input: 'abcdefgh' })).toBe(2);
    expect(sut({ input: [[1, 2], 'abcd'] })).toBe(3);
  });

  it('prefers messages over prompt over input', () => {
    expect(sut({ messages: [], prompt: 'abcdefgh', input: 'x' })).toBe(0);
    expect(sut({ prompt: 'abcdefgh', input: 'x'.repeat(400) })).toBe(2);
  });

  it.each([undefined, null, 'text', 42, {}, { prompt: 42 }, { input: { text: 'abcd' } }])(
    'estimates 0 for %j',
    (body) => {
      expect(sut(body)).toBe(0);
    },
  );
});
