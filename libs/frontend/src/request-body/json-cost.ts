/**
 * JSON nested deeper than this is refused with a 400 before any handler walks it: validation,
 * the token estimate and the proxy's re-serialisation all recurse, and a few kilobytes of
 * `[[[[…` would otherwise overflow the stack into a 500. Real OpenAI bodies, tool schemas
 * included, stay far below it.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Values of any kind, object keys included, that one body may hold. `JSON.parse` costs V8 about
 * 10 to 30 bytes per number or short string, so this bounds their part of a parse near 30 MB;
 * an embeddings request of a few hundred thousand token ids stays well inside it.
 */
export const MAX_JSON_VALUES = 1_000_000;

/**
 * Objects, arrays and object keys together: each costs `JSON.parse` about 80 to 100 bytes (a
 * 3-byte `{},` becomes a heap object, a key in a huge object a dictionary entry and an
 * internalised string), so 16 MiB of them would take well over a gigabyte. This bounds them
 * near 20 MB; a chat history of tens of thousands of turns, or a large tool schema, fits.
 */
export const MAX_JSON_NODES = 200_000;

export interface JsonLimits {
  maxDepth: number;
  maxValues: number;
  maxNodes: number;
}

/** What `JSON.parse` would build from a text, counted from its bytes. */
export interface JsonCounts {
  /** Deepest nesting of objects and arrays (0 for a scalar). */
  depth: number;
  /** Values of any kind, plus object keys. */
  values: number;
  /** Objects, arrays and object keys. */
  nodes: number;
  /** The first limit the text went over; counting stopped there. */
  over?: keyof JsonLimits;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const BODY_LIMITS: JsonLimits = {
  maxDepth: MAX_JSON_DEPTH,
  maxValues: MAX_JSON_VALUES,
  maxNodes: MAX_JSON_NODES,
};

/**
 * Why a JSON body must not be parsed, or undefined when it may be. One linear pass over the
 * bytes, allocating nothing: what the parse would build (nesting, values, objects) is bounded
 * before `JSON.parse` builds it, so a body's parse costs a bounded amount of memory whatever
 * its shape. A body of at most 2 × MAX_JSON_DEPTH bytes is under every limit and not scanned.
 */
export function jsonBodyRefusal(body: Buffer): string | undefined {
  if (body.length <= 2 * MAX_JSON_DEPTH) return undefined;
  switch (countJson(body, BODY_LIMITS).over) {
    case undefined:
      return undefined;
    case 'maxDepth':
      return `JSON body nested deeper than ${MAX_JSON_DEPTH} levels`;
    case 'maxValues':
      return `JSON body holds more than ${MAX_JSON_VALUES} values and keys`;
    case 'maxNodes':
      return `JSON body holds more than ${MAX_JSON_NODES} objects, arrays and keys`;
  }
}

/**
 * Counts the structure of a JSON text outside its strings. Exact for valid JSON: `values` is
 * 1 (the root) + the commas + the colons + the non-empty containers. For invalid JSON the
 * counts are only what the bytes suggest, which is enough: `JSON.parse` refuses it afterwards.
 * UTF-8 never uses a byte below 0x80 inside a multi-byte character, so the quote and backslash
 * bytes found here are the ones the parser sees after decoding.
 */
export function countJson(bytes: Buffer, limits: JsonLimits): JsonCounts {
  const counts: JsonCounts = { depth: 0, values: 1, nodes: 0 };
  let depth = 0;
  let afterOpen = false;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (c <= 0x20) continue; // whitespace, or a control byte the parser refuses
    if (afterOpen) {
      afterOpen = false;
      if (c !== CLOSE_ARRAY && c !== CLOSE_OBJECT && ++counts.values > limits.maxValues)
        return over(counts, 'maxValues');
    }
    if (c === QUOTE) {
      i = closingQuote(bytes, i);
      if (i < 0) break; // unterminated: the parser refuses it
    } else if (c === COMMA) {
      if (++counts.values > limits.maxValues) return over(counts, 'maxValues');
    } else if (c === COLON) {
      if (++counts.values > limits.maxValues) return over(counts, 'maxValues');
      if (++counts.nodes > limits.maxNodes) return over(counts, 'maxNodes');
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      afterOpen = true;
      if (++depth > counts.depth) {
        counts.depth = depth;
        if (depth > limits.maxDepth) return over(counts, 'maxDepth');
      }
      if (++counts.nodes > limits.maxNodes) return over(counts, 'maxNodes');
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return counts;
}

function over(counts: JsonCounts, limit: keyof JsonLimits): JsonCounts {
  counts.over = limit;
  return counts;
}

/**
 * The index of the quote that closes the string opened at `open`, or -1. The search is native
 * (`indexOf`), so a multi-megabyte prompt costs little; a quote is escaped when an odd number
 * of backslashes precede it, each run looked at once.
 */
function closingQuote(bytes: Buffer, open: number): number {
  let at = open;
  for (;;) {
    at = bytes.indexOf(QUOTE, at + 1);
    if (at < 0) return -1;
    let k = at - 1;
    while (bytes[k] === BACKSLASH) k--;
    if ((at - 1 - k) % 2 === 0) return at;
  }
}
