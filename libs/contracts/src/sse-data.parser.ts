/**
 * Server-sent events reduced to what OpenAI streams use: the `data` of each event, emitted
 * when its blank line arrives, whatever the network chunking (WHATWG HTML §9.2.6).
 */
export class SseDataParser {
  private buffer = '';
  private data: string[] = [];

  /** Feeds decoded text; returns the data of every event it completed. */
  push(text: string): string[] {
    this.buffer += text;
    const events: string[] = [];
    let start = 0;
    for (;;) {
      const end = this.lineEnd(start);
      if (end < 0) break;
      this.line(this.buffer.slice(start, end), events);
      start = end + (this.buffer.startsWith('\r\n', end) ? 2 : 1);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /** End of input: an event missing only its blank line still counts. */
  end(): string[] {
    const events: string[] = [];
    if (this.buffer !== '') this.line(this.buffer, events);
    this.buffer = '';
    this.line('', events);
    return events;
  }

  private lineEnd(from: number): number {
    for (let i = from; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c === '\n') return i;
      // A \r at the end may be the first half of a \r\n split across chunks: wait for more.
      if (c === '\r') return i + 1 < this.buffer.length ? i : -1;
    }
    return -1;
  }

  private line(line: string, events: string[]): void {
    if (line === '') {
      if (this.data.length > 0) events.push(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return; // comment / keep-alive
    const colon = line.indexOf(':');
    if ((colon < 0 ? line : line.slice(0, colon)) !== 'data') return;
    const value = colon < 0 ? '' : line.slice(colon + 1);
    this.data.push(value.startsWith(' ') ? value.slice(1) : value);
  }
}
