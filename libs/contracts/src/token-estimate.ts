/**
 * The deterministic token estimate shared by the simulated worker (usage fields, KV blocks)
 * and the frontend router (prompt tokens in flight per worker): one token per 4 UTF-16 code
 * units of text, rounded up, plus 4 tokens of chat framing per message. Arrays of integers
 * (pre-tokenised prompts) count one token per element. Real tokenisers differ by ~10-30%;
 * admission only needs a stable, monotone estimate.
 */
export const CHARS_PER_TOKEN = 4;
export const TOKENS_PER_CHAT_MESSAGE = 4;

export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

function contentTokens(content: unknown): number {
  if (typeof content === 'string') return estimateTextTokens(content);
  if (Array.isArray(content)) {
    let n = 0;
    for (const part of content) {
      if (typeof part === 'string') n += estimateTextTokens(part);
      else if (typeof part === 'number') n += 1;
      else if (
        part &&
        typeof part === 'object' &&
        typeof (part as { text?: unknown }).text === 'string'
      ) {
        n += estimateTextTokens((part as { text: string }).text);
      } else if (Array.isArray(part)) n += contentTokens(part);
    }
    return n;
  }
  return 0;
}

/** Prompt tokens of an OpenAI request body (chat `messages`, completion `prompt`, embedding `input`). */
export function estimatePromptTokens(body: unknown): number {
  if (!body || typeof body !== 'object') return 0;
  const b = body as { messages?: unknown; prompt?: unknown; input?: unknown };
  if (Array.isArray(b.messages)) {
    let n = 0;
    for (const m of b.messages) {
      n += TOKENS_PER_CHAT_MESSAGE;
      if (m && typeof m === 'object') n += contentTokens((m as { content?: unknown }).content);
    }
    return n;
  }
  if (b.prompt !== undefined) return contentTokens(b.prompt);
  if (b.input !== undefined) return contentTokens(b.input);
  return 0;
}
