import { SseDataParser } from '@sluice/contracts';

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
