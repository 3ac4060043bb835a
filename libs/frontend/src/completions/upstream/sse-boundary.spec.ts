import { sseBoundaryBefore, SseTail } from './sse-boundary';

function after(...chunks: string[]): string {
  const sut = new SseTail();
  for (const c of chunks) sut.saw(Buffer.from(c));
  return sseBoundaryBefore(sut);
}

describe('sseBoundaryBefore', () => {
  it('adds nothing when nothing was relayed', () => {
    expect(after()).toBe('');
    expect(after('')).toBe('');
  });

  it.each([
    ['LF', 'data: {"a":1}\n\n'],
    ['CRLF', 'data: {"a":1}\r\n\r\n'],
    ['CR', 'data: {"a":1}\r\r'],
    ['a comment', ': keep-alive\n\n'],
  ])('adds nothing after a whole event (%s)', (_name, stream) => {
    expect(after(stream)).toBe('');
  });

  it('ends a half-relayed line and its event', () => {
    expect(after('data: {"a":1}\n\n', 'data: {"b"')).toBe('\n\n');
  });

  it('ends the event when the stream stopped after a complete line', () => {
    expect(after('data: {"a":1}\n')).toBe('\n');
    expect(after('data: {"a":1}\r\n')).toBe('\n');
  });

  it('sees a boundary split over chunks, however small', () => {
    expect(after('data: {"a":1}', '\n', '\n')).toBe('');
    expect(after('data: {"a":1}\r', '\n', '\r', '\n')).toBe('');
    expect(after('data: {"a":1}\n', '\n', 'd')).toBe('\n\n');
  });
});
