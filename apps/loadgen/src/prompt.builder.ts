import { CHARS_PER_TOKEN } from '@sluice/contracts';
import { LoadgenOptions } from './loadgen.options';

// prettier-ignore
const WORDS = [
  'river', 'stone', 'lantern', 'orbit', 'harvest', 'signal', 'copper', 'meadow',
  'glacier', 'engine', 'violet', 'harbor', 'canyon', 'feather', 'quartz', 'ember',
  'tunnel', 'willow', 'comet', 'ledger', 'prism', 'falcon', 'tundra', 'cipher',
  'marble', 'beacon', 'thicket', 'voyage', 'saddle', 'nectar', 'quiver', 'summit',
];

/**
 * mulberry32: a small seeded generator, so request i always gets the same prompt (and bench
 * scenarios the same arrivals for every policy).
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A deterministic prompt of `tokens` tokens by Sluice's estimate (4 characters per token),
 * different for every request index so no two requests share a cacheable prefix.
 */
export function buildPrompt(index: number, tokens: number): string {
  const length = tokens * CHARS_PER_TOKEN;
  const random = seededRandom(index + 1);
  const parts = [`Request ${index}:`];
  let size = parts[0].length;
  while (size < length) {
    const word = WORDS[Math.floor(random() * WORDS.length)];
    parts.push(word);
    size += word.length + 1;
  }
  return parts.join(' ').slice(0, length);
}

/** Path of the OpenAI route under the base URL; a trailing `/v1` in --url is tolerated. */
export function requestPath(options: Pick<LoadgenOptions, 'url' | 'endpoint'>): string {
  const base = options.url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${base}/v1/${options.endpoint === 'chat' ? 'chat/completions' : 'completions'}`;
}

export function buildRequestBody(options: LoadgenOptions, index: number): string {
  const prompt = buildPrompt(index, options.promptTokens);
  const input =
    options.endpoint === 'chat' ? { messages: [{ role: 'user', content: prompt }] } : { prompt };
  return JSON.stringify({
    model: options.model,
    ...input,
    max_tokens: options.maxTokens,
    stream: options.stream,
    // Asks for a final usage chunk so output tokens are exact rather than counted per chunk.
    ...(options.stream ? { stream_options: { include_usage: true } } : {}),
  });
}
