/**
 * One streamed `/v1/completions` request as a client sees it, for the real-engine tests and the
 * benchmark: status, refusal reason, time to the first streamed chunk, tokens generated.
 */

export interface CompletionSpec {
  readonly model: string;
  /** Tokens to generate; the request asks for exactly these (`ignore_eos`). */
  readonly maxTokens: number;
  /** Prompt length in words of the tiny model's vocabulary (about one token a word). */
  readonly promptWords?: number;
  /** Varies the prompt, so that requests do not share a cached prefix. */
  readonly tag?: string;
  readonly signal?: AbortSignal;
  /** Further request headers (e.g. the priority header). */
  readonly headers?: Record<string, string>;
}

export interface CompletionOutcome {
  readonly status: number;
  /** `x-sluice-reject-reason` of a refusal; null otherwise. */
  readonly rejectReason: string | null;
  /** The `message` of an error answer's JSON body; null for a streamed answer. */
  readonly message: string | null;
  /** From sending the request to its first streamed chunk; null when none came. */
  readonly ttftMs: number | null;
  /** From sending the request to the end of its answer. */
  readonly totalMs: number;
  /** `usage.completion_tokens` of the last chunk; null when the answer had none. */
  readonly completionTokens: number | null;
  /** Why the request failed on the client's side (connection, abort); null when it did not. */
  readonly error: string | null;
}

const WORDS = 'the of and to in is that for it as with was on be by at this are from or an'.split(
  ' ',
);

/** A prompt of `words` words, starting with `tag`. */
export function promptOf(words: number, tag = ''): string {
  const body = Array.from({ length: words }, (_, i) => WORDS[i % WORDS.length]);
  return `${tag} ${body.join(' ')}`.trim();
}

/** Sends one streamed completion to `baseUrl` (Sluice or the engine itself) and reads it whole. */
export async function streamCompletion(
  baseUrl: string,
  spec: CompletionSpec,
): Promise<CompletionOutcome> {
  const t0 = performance.now();
  let status = 0;
  let rejectReason: string | null = null;
  let ttftMs: number | null = null;
  let completionTokens: number | null = null;
  let message: string | null = null;
  const outcome = (error: string | null): CompletionOutcome => ({
    status,
    rejectReason,
    message,
    ttftMs,
    totalMs: performance.now() - t0,
    completionTokens,
    error,
  });
  try {
    const res = await fetch(`${baseUrl}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...spec.headers },
      body: JSON.stringify({
        model: spec.model,
        prompt: promptOf(spec.promptWords ?? 16, spec.tag),
        max_tokens: spec.maxTokens,
        ignore_eos: true,
        stream: true,
      }),
      signal: spec.signal,
    });
    status = res.status;
    rejectReason = res.headers.get('x-sluice-reject-reason');
    if (!res.ok) {
      message = messageOf(await res.text());
      return outcome(null);
    }
    let tail = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body ?? []) {
      ttftMs ??= performance.now() - t0;
      tail = lastUsage(tail + decoder.decode(chunk as Uint8Array, { stream: true }), (n) => {
        completionTokens = n;
      });
    }
    return outcome(null);
  } catch (err) {
    return outcome(err instanceof Error ? err.message : String(err));
  }
}

function messageOf(body: string): string {
  try {
    const m = (JSON.parse(body) as { message?: unknown; error?: { message?: unknown } }) ?? {};
    const text = m.message ?? m.error?.message;
    return typeof text === 'string' ? text : body;
  } catch {
    return body;
  }
}

/** Reads `usage.completion_tokens` from every whole SSE event in `text`; returns the rest. */
function lastUsage(text: string, found: (n: number) => void): string {
  const events = text.split('\n\n');
  const rest = events.pop() ?? '';
  for (const event of events) {
    const data = event.startsWith('data: ') ? event.slice(6) : '';
    if (!data.includes('"usage"')) continue;
    try {
      const n = (JSON.parse(data) as { usage?: { completion_tokens?: unknown } }).usage
        ?.completion_tokens;
      if (typeof n === 'number') found(n);
    } catch {
      // Not JSON (an error event of a broken stream): no usage in it.
    }
  }
  return rest;
}
