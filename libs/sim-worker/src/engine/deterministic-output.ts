/**
 * Output that depends only on the prompt, so that a test (or a cache in front of the worker)
 * sees the same answer for the same request, and different prompts look different.
 */
const VOCABULARY = (
  'the a model token cache block worker request answer stream batch prefill decode queue ' +
  'latency river sluice gate water flow level high low fast slow steady and or of to in on ' +
  'with for is was will can each every some many few one two three green blue quiet bright ' +
  'simple clear open closed north south east west morning evening light stone bridge path'
).split(' ');

/** 32-bit FNV-1a over UTF-16 code units: fast, stable across runs and platforms. */
export function promptSeed(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** murmur3's finaliser over (seed, index): neighbouring indexes give unrelated values. */
function mix(seed: number, index: number): number {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Text of output token `index`; every token after the first starts with a space. */
export function tokenText(seed: number, index: number): string {
  const word = VOCABULARY[mix(seed, index) % VOCABULARY.length];
  return index === 0 ? word : ` ${word}`;
}

/** A unit vector of `dimensions` components in [-1, 1] determined by `text`. */
export function embeddingVector(text: string, dimensions: number): number[] {
  const seed = promptSeed(text);
  const raw = Array.from({ length: dimensions }, (_, i) => mix(seed, i) / 0x7fffffff - 1);
  const norm = Math.hypot(...raw) || 1;
  return raw.map((v) => v / norm);
}
