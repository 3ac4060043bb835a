/** The top-level fields the admission decision and its metrics read from an OpenAI body. */
export interface TopLevelFields {
  /** `model` when it is a string; undefined when it is absent or of another type. */
  readonly model: string | undefined;
  /** Whether `stream` is `true` (the metrics' request type). */
  readonly stream: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');
const MODEL = Buffer.from('model');
const STREAM = Buffer.from('stream');
// Keys Fastify's parser refuses (prototype poisoning) or looks into: never judged here.
const PROTO = Buffer.from('__proto__');
const CONSTRUCTOR = Buffer.from('constructor');

/** No answer: the bytes are not valid JSON, or not something this reader vouches for. */
const UNSURE = -1;

/**
 * Reads `model` and `stream` of a JSON object from its bytes without building it, or returns
 * null when not sure. It answers only for a text that `JSON.parse` accepts (the whole text is
 * checked against the JSON grammar, nesting at most `maxDepth`) and that Fastify's parser does
 * not refuse; then its answer is the parsed object's, duplicate keys included (the last wins).
 * Null for anything else: a root that is not an object, a byte-order mark, a key written with
 * an escape, a `__proto__` or `constructor` key at any depth. The caller then parses the body
 * as usual, so an unsure read costs time, never a different answer.
 */
export function readTopLevelFields(bytes: Buffer, maxDepth: number): TopLevelFields | null {
  const n = bytes.length;
  let i = skipSpace(bytes, 0);
  if (bytes[i] !== OPEN_OBJECT || maxDepth < 1) return null;
  let model: string | undefined;
  let stream = false;
  i = skipSpace(bytes, i + 1);
  if (bytes[i] === CLOSE_OBJECT) return skipSpace(bytes, i + 1) === n ? { model, stream } : null;
  for (;;) {
    const key = i;
    i = plainKeyEnd(bytes, i);
    if (i === UNSURE) return null;
    const valueAt = skipSpace(bytes, i);
    i = valueEnd(bytes, valueAt, 2, maxDepth);
    if (i === UNSURE) return null;
    if (isKey(bytes, key, MODEL)) {
      model = bytes[valueAt] === QUOTE ? stringValue(bytes, valueAt, i) : undefined;
    } else if (isKey(bytes, key, STREAM)) {
      stream = bytes[valueAt] === TRUE[0];
    }
    i = skipSpace(bytes, i);
    if (bytes[i] === COMMA) i = skipSpace(bytes, i + 1);
    else if (bytes[i] === CLOSE_OBJECT) break;
    else return null;
  }
  return skipSpace(bytes, i + 1) === n ? { model, stream } : null;
}

/** JSON's four whitespace bytes only. */
function skipSpace(bytes: Buffer, i: number): number {
  for (;;) {
    const c = bytes[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/**
 * The index after the colon of an object key opened at `i`; UNSURE unless it is a string
 * without escapes (or the control characters JSON refuses) that names no prototype property.
 * One pass over the key: keys are read for every member at every depth.
 */
function plainKeyEnd(bytes: Buffer, i: number): number {
  if (bytes[i] !== QUOTE) return UNSURE;
  const n = bytes.length;
  let k = i + 1;
  for (; k < n; k++) {
    const c = bytes[k];
    if (c === QUOTE) break;
    if (c < 0x20 || c === BACKSLASH) return UNSURE;
  }
  if (k === n) return UNSURE;
  if (isKey(bytes, i, PROTO) || isKey(bytes, i, CONSTRUCTOR)) return UNSURE;
  const colon = skipSpace(bytes, k + 1);
  return bytes[colon] === COLON ? colon + 1 : UNSURE;
}

/** Whether the string opened at `quote` holds exactly `name` (no escapes). */
function isKey(bytes: Buffer, quote: number, name: Buffer): boolean {
  return bytes[quote + 1 + name.length] === QUOTE && bytesAt(bytes, quote + 1, name);
}

/** Whether `bytes` holds `expected` from `at` on. */
function bytesAt(bytes: Buffer, at: number, expected: Buffer): boolean {
  // A loop, not Buffer.compare: for a few bytes the native call costs more than the compare.
  for (let k = 0; k < expected.length; k++) if (bytes[at + k] !== expected[k]) return false;
  return true;
}

/** The last string `stringValue` decoded, and the bytes of its literal: see there. */
let lastLiteral: Buffer = Buffer.alloc(0);
let lastValue = '';
/** Longer literals are decoded each time, so that a long name never costs a copy. */
const MAX_REMEMBERED_BYTES = 256;

/**
 * The decoded string whose literal spans [quote, end). Requests mostly name one of a few models,
 * so the last value is kept, with a copy of its literal's bytes, and given again while the bytes
 * are the same: the same characters either way. Decoding through `toString` was a fifth of this
 * reader's time on a chat body; comparing a short name's bytes costs far less. The string given
 * again also keeps its hash, which the model lookups that follow would otherwise compute anew.
 */
function stringValue(bytes: Buffer, quote: number, end: number): string {
  const length = end - quote;
  if (length === lastLiteral.length && bytesAt(bytes, quote, lastLiteral)) return lastValue;
  // Bounded by quotes, which UTF-8 never uses inside a character: decoding the slice gives
  // the same characters as decoding the whole body.
  const raw = bytes.toString('utf8', quote, end);
  const value = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  if (length <= MAX_REMEMBERED_BYTES) {
    lastLiteral = Buffer.from(bytes.subarray(quote, end));
    lastValue = value;
  }
  return value;
}

/** The index after the value starting at `i` (at nesting `depth` if a container), or UNSURE. */
function valueEnd(bytes: Buffer, i: number, depth: number, maxDepth: number): number {
  const c = bytes[i];
  if (c === QUOTE) return stringEnd(bytes, i);
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
    return depth > maxDepth ? UNSURE : containerEnd(bytes, i, depth, maxDepth);
  }
  if (c === TRUE[0]) return literalEnd(bytes, i, TRUE);
  if (c === FALSE[0]) return literalEnd(bytes, i, FALSE);
  if (c === NULL[0]) return literalEnd(bytes, i, NULL);
  return numberEnd(bytes, i);
}

function containerEnd(bytes: Buffer, i: number, depth: number, maxDepth: number): number {
  const close = bytes[i] === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
  i = skipSpace(bytes, i + 1);
  if (bytes[i] === close) return i + 1;
  for (;;) {
    if (close === CLOSE_OBJECT) {
      i = plainKeyEnd(bytes, i);
      if (i === UNSURE) return UNSURE;
      i = skipSpace(bytes, i);
    }
    i = valueEnd(bytes, i, depth + 1, maxDepth);
    if (i === UNSURE) return UNSURE;
    i = skipSpace(bytes, i);
    if (bytes[i] === close) return i + 1;
    if (bytes[i] !== COMMA) return UNSURE;
    i = skipSpace(bytes, i + 1);
  }
}

/**
 * The index after the closing quote of the string opened at `i`, or UNSURE: JSON.parse refuses
 * a raw control character, a bad escape, an unterminated string. Bytes from 0x80 up are never
 * refused (invalid UTF-8 decodes to U+FFFD).
 */
function stringEnd(bytes: Buffer, i: number): number {
  const n = bytes.length;
  for (i++; i < n; i++) {
    const c = bytes[i];
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return UNSURE;
    if (c !== BACKSLASH) continue;
    const e = bytes[++i];
    if (e === 0x75 /* u */) {
      for (let k = 0; k < 4; k++) if (!isHex(bytes[++i])) return UNSURE;
    } else if (
      e !== QUOTE &&
      e !== BACKSLASH &&
      e !== 0x2f && // '/'
      e !== 0x62 && // b
      e !== 0x66 && // f
      e !== 0x6e && // n
      e !== 0x72 && // r
      e !== 0x74 // t
    ) {
      return UNSURE;
    }
  }
  return UNSURE;
}

function isHex(c: number | undefined): boolean {
  if (c === undefined) return false;
  const lower = c | 0x20;
  return (c >= ZERO && c <= NINE) || (lower >= 0x61 && lower <= 0x66);
}

function literalEnd(bytes: Buffer, i: number, literal: Buffer): number {
  return bytesAt(bytes, i, literal) ? i + literal.length : UNSURE;
}

/** `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`; what follows is the caller's to check. */
function numberEnd(bytes: Buffer, i: number): number {
  if (bytes[i] === MINUS) i++;
  if (bytes[i] === ZERO) i++;
  else if (isDigit(bytes[i])) i = digitsEnd(bytes, i);
  else return UNSURE;
  if (bytes[i] === DOT) {
    if (!isDigit(bytes[++i])) return UNSURE;
    i = digitsEnd(bytes, i);
  }
  if ((bytes[i] | 0x20) === 0x65 /* e or E */) {
    i++;
    if (bytes[i] === PLUS || bytes[i] === MINUS) i++;
    if (!isDigit(bytes[i])) return UNSURE;
    i = digitsEnd(bytes, i);
  }
  return i;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= ZERO && c <= NINE;
}

function digitsEnd(bytes: Buffer, i: number): number {
  while (isDigit(bytes[i])) i++;
  return i;
}
