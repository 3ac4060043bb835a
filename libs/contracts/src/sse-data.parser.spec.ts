import { SseDataParser as SseParser } from './sse-data.parser';

describe('SseParser', () => {
  it('emits the data of each event when its blank line arrives, across chunk borders', () => {
    const sut = new SseParser();
    expect(sut.push('data: {"a"')).toEqual([]);
    expect(sut.push(':1}\n')).toEqual([]);
    expect(sut.push('\ndata: [DONE]\n\n')).toEqual(['{"a":1}', '[DONE]']);
  });

  it('accepts \\r\\n split between chunks, joins multi-line data, skips comments', () => {
    const sut = new SseParser();
    expect(sut.push(': keep-alive\r\ndata: x\r')).toEqual([]);
    expect(sut.push('\ndata: y\r\n\r\nevent: e\ndata:z\n\n')).toEqual(['x\ny', 'z']);
  });

  it('keeps a last event that lacks only its blank line', () => {
    const sut = new SseParser();
    expect(sut.push('data: last')).toEqual([]);
    expect(sut.end()).toEqual(['last']);
  });
});
