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

/** The limits of a request body. */
const BODY_LIMITS: Readonly<JsonLimits> = {
  maxDepth: MAX_JSON_DEPTH,
  maxValues: MAX_JSON_VALUES,
  maxNodes: MAX_JSON_NODES,
};

/**
 * A body of at most this many bytes is not counted: valid JSON that short is under every limit
 * (nesting past MAX_JSON_DEPTH takes 2 × 129 bytes to open and close), and what is not valid
 * the parse refuses.
 */
const UNCOUNTED_BODY_BYTES = 2 * MAX_JSON_DEPTH;

/**
 * The counter of a request body of `bytes` (declared or known; NaN when not declared) against the
 * limits of a request body, or null when a body that short need not be counted.
 */
export function bodyCost(bytes: number): JsonCost | null {
  return bytes <= UNCOUNTED_BODY_BYTES ? null : new JsonCost(BODY_LIMITS);
}

/** The 400's message for a body over one of the limits of a request body. */
export function jsonBodyRefusalFor(over: keyof JsonLimits): string {
  switch (over) {
    case 'maxDepth':
      return `JSON body nested deeper than ${MAX_JSON_DEPTH} levels`;
    case 'maxValues':
      return `JSON body holds more than ${MAX_JSON_VALUES} values and keys`;
    case 'maxNodes':
      return `JSON body holds more than ${MAX_JSON_NODES} objects, arrays and keys`;
  }
}

/**
 * Why a whole JSON body must not be parsed, or undefined when it may be: what the parse would
 * build (nesting, values, objects) is bounded before `JSON.parse` builds it, so a body's parse
 * costs a bounded amount of memory whatever its shape. For a body still arriving, count it
 * chunk by chunk with a `JsonCost` of BODY_LIMITS instead, and refuse at the first chunk that
 * goes over.
 */
export function jsonBodyRefusal(body: Buffer): string | undefined {
  const over = bodyCost(body.length)?.push(body);
  return over === undefined ? undefined : jsonBodyRefusalFor(over);
}

/** `JsonCost` over one whole text. */
export function countJson(bytes: Buffer, limits: Readonly<JsonLimits>): JsonCounts {
  const cost = new JsonCost(limits);
  cost.push(bytes);
  return cost.counts();
}

/**
 * Counts the structure of a JSON text outside its strings, as its bytes arrive: one linear pass
 * over each chunk, allocating nothing, with what a chunk leaves open (nesting, a string, an
 * escape, an opened container) carried to the next, so a token may be split anywhere and the
 * counts are those of the whole text. A body is thus refused at the first chunk that goes over a
 * limit, without the rest being held in memory.
 *
 * Exact for valid JSON: `values` is 1 (the root) + the commas + the colons + the non-empty
 * containers. For invalid JSON the counts are only what the bytes suggest, which is enough:
 * `JSON.parse` refuses it afterwards. UTF-8 never uses a byte below 0x80 inside a multi-byte
 * character, so the quote and backslash bytes found here are the ones the parser sees after
 * decoding, wherever the chunks split a character.
 */
export class JsonCost {
  private readonly count: JsonCounts = { depth: 0, values: 1, nodes: 0 };
  /** Nesting where the bytes so far end. */
  private depth = 0;
  /** The last byte outside whitespace opened an object or an array. */
  private afterOpen = false;
  /** The bytes so far end inside a string… */
  private inString = false;
  /** …right after a backslash that escapes the string's next byte. */
  private escaped = false;

  constructor(private readonly limits: Readonly<JsonLimits>) {}

  /**
   * Counts the next bytes of the text. Returns the first limit the text has gone over, in these
   * bytes or before (counting stopped there and later bytes are ignored), else undefined.
   */
  push(bytes: Buffer): keyof JsonLimits | undefined {
    const counts = this.count;
    if (counts.over !== undefined) return counts.over;
    const n = bytes.length;
    if (n === 0) return undefined; // an escape or an opened container waits for a byte
    const limits = this.limits;
    let depth = this.depth;
    let afterOpen = this.afterOpen;
    let i = 0;
    if (this.inString) {
      i = this.closingQuote(bytes, 0);
      if (i < 0) return undefined;
      i++;
    }
    for (; i < n; i++) {
      const c = bytes[i];
      if (c <= 0x20) continue; // whitespace, or a control byte the parser refuses
      if (afterOpen) {
        afterOpen = false;
        if (c !== CLOSE_ARRAY && c !== CLOSE_OBJECT && ++counts.values > limits.maxValues)
          return this.stop('maxValues');
      }
      if (c === QUOTE) {
        i = this.closingQuote(bytes, i + 1);
        if (i < 0) break; // the string goes on in the next bytes
      } else if (c === COMMA) {
        if (++counts.values > limits.maxValues) return this.stop('maxValues');
      } else if (c === COLON) {
        if (++counts.values > limits.maxValues) return this.stop('maxValues');
        if (++counts.nodes > limits.maxNodes) return this.stop('maxNodes');
      } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        afterOpen = true;
        if (++depth > counts.depth) {
          counts.depth = depth;
          if (depth > limits.maxDepth) return this.stop('maxDepth');
        }
        if (++counts.nodes > limits.maxNodes) return this.stop('maxNodes');
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        depth--;
      }
    }
    this.depth = depth;
    this.afterOpen = afterOpen;
    return undefined;
  }

  /** What the bytes so far hold, and the limit they went over if they did. */
  counts(): JsonCounts {
    return { ...this.count };
  }

  private stop(limit: keyof JsonLimits): keyof JsonLimits {
    this.count.over = limit;
    return limit;
  }

  /**
   * The index of the quote that closes the string `from` is inside of, or -1 when the string
   * goes on past these bytes (`inString` and `escaped` then say where it stands). The search is
   * native (`indexOf`), so a multi-megabyte prompt costs little; a quote is escaped when an odd
   * number of backslashes precede it, each run looked at once. A run cut by the chunk's end is
   * carried as `escaped`, so it is never looked at across chunks.
   */
  private closingQuote(bytes: Buffer, from: number): number {
    let at = from;
    if (this.escaped) {
      this.escaped = false;
      at++;
    }
    for (;;) {
      const quote = bytes.indexOf(QUOTE, at);
      const end = quote < 0 ? bytes.length : quote;
      let k = end - 1;
      while (k >= at && bytes[k] === BACKSLASH) k--;
      const odd = (end - 1 - k) % 2 === 1;
      if (quote < 0) {
        this.inString = true;
        this.escaped = odd;
        return -1;
      }
      if (!odd) {
        this.inString = false;
        return quote;
      }
      at = quote + 1;
    }
  }
}
