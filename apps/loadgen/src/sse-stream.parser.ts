/**
 * Server-sent events, reduced to what the load generator needs: the `data` of each event, as
 * soon as the event is complete (its blank line has arrived), whatever the network chunking.
 */
export class SseDataParser {
  private buffer = '';
  private data: string[] = [];

  /** Feeds decoded text; returns the data of every event completed by it. */
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

  /** End of stream: a last event without its blank line still counts. */
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
      // A trailing \r may be the first half of \r\n split across two chunks: wait for more.
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
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data') return;
    const value = colon < 0 ? '' : line.slice(colon + 1);
    this.data.push(value.startsWith(' ') ? value.slice(1) : value);
  }
}

interface StreamChunk {
  choices?: { delta?: { content?: unknown }; text?: unknown }[];
  usage?: { completion_tokens?: unknown } | null;
  error?: unknown;
}

/**
 * Reads an OpenAI streaming response: time of the first data event (time to first token),
 * the `[DONE]` terminator, and output tokens (the `usage` chunk when the server sends one,
 * else one token per content chunk).
 */
export class OpenAiStreamReader {
  private readonly parser = new SseDataParser();
  private firstDataAt: number | null = null;
  private contentChunks = 0;
  private usageTokens: number | null = null;
  private sawDone = false;
  private sawError = false;

  /** Feeds decoded text received at `nowMs`. */
  push(text: string, nowMs: number): void {
    this.events(this.parser.push(text), nowMs);
  }

  end(nowMs: number): void {
    this.events(this.parser.end(), nowMs);
  }

  get firstDataAtMs(): number | null {
    return this.firstDataAt;
  }

  get done(): boolean {
    return this.sawDone;
  }

  get failed(): boolean {
    return this.sawError;
  }

  get outputTokens(): number {
    return this.usageTokens ?? this.contentChunks;
  }

  private events(events: string[], nowMs: number): void {
    for (const data of events) {
      this.firstDataAt ??= nowMs;
      if (data === '[DONE]') this.sawDone = true;
      else this.chunk(data);
    }
  }

  private chunk(data: string): void {
    let parsed: StreamChunk;
    try {
      parsed = JSON.parse(data) as StreamChunk;
    } catch {
      return;
    }
    if (parsed === null || typeof parsed !== 'object') return;
    if (parsed.error !== undefined) this.sawError = true;
    const usage = parsed.usage?.completion_tokens;
    if (typeof usage === 'number') this.usageTokens = usage;
    for (const choice of parsed.choices ?? []) {
      const text = choice.delta?.content ?? choice.text;
      if (typeof text === 'string' && text !== '') this.contentChunks += 1;
    }
  }
}
