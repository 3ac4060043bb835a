import { SseDataParser } from '@sluice/contracts';
import { OpenAiStreamReader } from './sse-stream.parser';

const chunk = (content: string) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

describe('SseDataParser', () => {
  it('returns an event only once its blank line has arrived, however the bytes are split', () => {
    const sut = new SseDataParser();
    expect(sut.push('data: {"a"')).toEqual([]);
    expect(sut.push(':1}\n')).toEqual([]);
    expect(sut.push('\ndata: [DONE]\n\n')).toEqual(['{"a":1}', '[DONE]']);
  });

  it('ignores comments and non-data fields, joins multi-line data, accepts CRLF', () => {
    const sut = new SseDataParser();
    expect(sut.push(': keep-alive\n\nevent: ping\nid: 3\n\n')).toEqual([]);
    expect(sut.push('data: one\r')).toEqual([]);
    expect(sut.push('\ndata:two\r\n\r\n')).toEqual(['one\ntwo']);
  });

  it('flushes a final event that lacks its blank line at end of stream', () => {
    const sut = new SseDataParser();
    expect(sut.push('data: [DONE]')).toEqual([]);
    expect(sut.end()).toEqual(['[DONE]']);
  });
});

describe('OpenAiStreamReader', () => {
  it('marks the first token at the first complete data event, not at the first bytes', () => {
    const sut = new OpenAiStreamReader();
    sut.push(': ping\n\n', 5);
    sut.push('data: {"choices":[{"delta":{"role":"assis', 10);
    expect(sut.firstDataAtMs).toBeNull();
    sut.push('tant"}}]}\n\n', 42);
    sut.push(chunk('Hello'), 50);
    expect(sut.firstDataAtMs).toBe(42);
    expect(sut.done).toBe(false);
    sut.push('data: [DONE]\n\n', 60);
    expect(sut.done).toBe(true);
    expect(sut.firstDataAtMs).toBe(42);
  });

  it('counts one output token per content chunk when there is no usage chunk', () => {
    const sut = new OpenAiStreamReader();
    sut.push(chunk('a') + chunk('') + chunk('b') + chunk('c'), 1);
    sut.push('data: {"choices":[{"text":"d"}]}\n\ndata: [DONE]\n\n', 2);
    expect(sut.outputTokens).toBe(4);
  });

  it('prefers the usage chunk for output tokens', () => {
    const sut = new OpenAiStreamReader();
    sut.push(chunk('ab') + 'data: {"choices":[],"usage":{"completion_tokens":300}}\n\n', 1);
    expect(sut.outputTokens).toBe(300);
  });

  it('notices an error object in the stream', () => {
    const sut = new OpenAiStreamReader();
    sut.push('data: {"error":{"message":"boom"}}\n\n', 1);
    expect(sut.failed).toBe(true);
  });
});
