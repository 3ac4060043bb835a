import { SseEvents } from './sse-events';

/** What goes out for `chunks` fed in turn, and whether the stream would end mid-event. */
function relay(...chunks: string[]): { out: string; partial: boolean } {
  const sut = new SseEvents();
  let out = '';
  for (const c of chunks) out += sut.push(Buffer.from(c))?.toString() ?? '';
  return { out, partial: sut.partial };
}

describe('SseEvents', () => {
  it.each([
    ['LF', 'data: {"a":1}\n\n'],
    ['CRLF', 'data: {"a":1}\r\n\r\n'],
    ['CR', 'data: {"a":1}\r\r'],
    ['a comment', ': keep-alive\n\n'],
    ['two events', 'data: 1\n\nevent: x\ndata: 2\n\n'],
  ])('passes whole events through at once (%s)', (_name, stream) => {
    expect(relay(stream)).toEqual({ out: stream, partial: false });
  });

  it('holds an event until its blank line, however the chunks split it', () => {
    const stream = 'data: {"a":1}\r\n\r\ndata: {"b":2}\n\n';
    for (let size = 1; size <= 4; size++) {
      const chunks = stream.match(new RegExp(`[^]{1,${size}}`, 'g')) ?? [];
      expect(relay(...chunks)).toEqual({ out: stream, partial: false });
    }
    const sut = new SseEvents();
    expect(sut.push(Buffer.from('data: {"a"'))).toBeNull();
    expect(sut.push(Buffer.from(':1}\n'))).toBeNull();
    expect(sut.push(Buffer.from('\ndata: {"b"'))?.toString()).toBe('data: {"a":1}\n\n');
    expect(sut.pendingBytes).toBe('data: {"b"'.length);
  });

  it('keeps the LF of a CRLF that ended an event with that event', () => {
    expect(relay('data: 1\r\n\r', '\ndata: 2\n\n')).toEqual({
      out: 'data: 1\r\n\r\ndata: 2\n\n',
      partial: false,
    });
    expect(relay('data: 1\r\r', '\n')).toEqual({ out: 'data: 1\r\r\n', partial: false });
  });

  it.each([
    ['inside a line', ['data: {"a":1}\n\n', 'data: {"b"'], 'data: {"a":1}\n\n'],
    ['after a whole line', ['data: {"a":1}\n'], ''],
    [
      'on a lone CR that ended a line',
      ['data: {"a":1}\n\n', 'data: {"b":2}\r'],
      'data: {"a":1}\n\n',
    ],
    ['after a CRLF line', ['data: {"a":1}\r\n'], ''],
  ])('never sends a half event and says the stream was cut (%s)', (_name, chunks, whole) => {
    expect(relay(...chunks)).toEqual({ out: whole, partial: true });
  });
});
