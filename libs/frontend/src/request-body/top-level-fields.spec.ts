import fc from 'fast-check';
import Fastify from 'fastify';
import { countJson } from './json-cost';
import { readTopLevelFields, TopLevelFields } from './top-level-fields';

/** Fixed so a failure replays; fast-check prints the counterexample and its seed. */
const SEED = 20261201;
const MAX_DEPTH = 128;
const UNBOUNDED = { maxDepth: Infinity, maxValues: Infinity, maxNodes: Infinity };

/** The frontend's own parse of a JSON body: Fastify's parser, prototype poisoning an error. */
const fastifyJson = Fastify().getDefaultJsonParser('error', 'error');

type Parsed = { ok: true; value: unknown } | { ok: false };

function parse(bytes: Buffer): Parsed {
  let parsed: Parsed = { ok: false };
  void fastifyJson({} as never, bytes.toString('utf8'), (err, value) => {
    parsed = err ? { ok: false } : { ok: true, value };
  });
  return parsed;
}

/** What the reader must answer for a body the parser accepts. */
function expected(value: unknown): TopLevelFields {
  const body = value as { model?: unknown; stream?: unknown };
  return {
    model: typeof body.model === 'string' ? body.model : undefined,
    stream: body.stream === true,
  };
}

/** When the reader answers, the parse succeeds and builds an object with the same fields. */
function agreesWithParse(bytes: Buffer, maxDepth = MAX_DEPTH): TopLevelFields | null {
  const read = readTopLevelFields(bytes, maxDepth);
  if (read === null) return null;
  const parsed = parse(bytes);
  expect(parsed.ok).toBe(true);
  if (!parsed.ok) return read;
  expect(typeof parsed.value === 'object' && !Array.isArray(parsed.value)).toBe(true);
  expect(read).toEqual(expected(parsed.value));
  expect(countJson(bytes, UNBOUNDED).depth).toBeLessThanOrEqual(maxDepth);
  return read;
}

const read = (text: string | Buffer): TopLevelFields | null =>
  agreesWithParse(Buffer.isBuffer(text) ? text : Buffer.from(text));

// Keys and values an OpenAI body holds, plus the ones the reader must look past.
const key = fc.oneof(
  fc.constantFrom('model', 'stream', 'messages', 'max_tokens', 'Model', 'modell', '', '__proto__'),
  fc.string({ unit: 'binary', maxLength: 8 }),
);
const value = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.boolean(),
  fc.constantFrom('true', 1, null, 'm'),
  fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }),
  fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
);
const space = fc.constantFrom('', ' ', '\n', '\t', '\r\n  ');

/** An object's text from its entries (duplicates kept, in order), spaced between every token. */
const objectText = fc
  .tuple(fc.array(fc.tuple(key, value), { maxLength: 6 }), fc.array(space, { minLength: 8 }))
  .map(([entries, spaces]) => {
    const s = (i: number): string => spaces[i % spaces.length];
    const members = entries.map(
      ([k, v], i) => `${s(i)}${JSON.stringify(k)}${s(i + 1)}:${s(i + 2)}${JSON.stringify(v)}`,
    );
    return `${s(3)}{${members.join(`${s(4)},`)}${s(5)}}${s(6)}`;
  });

/** Bytes that change what a JSON text means, and a few that break UTF-8. */
const oddByte = fc.constantFrom(
  ...Buffer.from('"\\{}[],:0123456789-+.eEtrufalsn \t\n\r/ubm'),
  0x00,
  0x1f,
  0x7f,
  0x80,
  0xc3,
  0xe2,
  0xef,
  0xff,
);
const edit = fc.tuple(fc.nat(), fc.constantFrom('insert', 'replace', 'delete'), oddByte);

function mutate(text: string, edits: Array<[number, string, number]>): Buffer {
  const bytes = [...Buffer.from(text)];
  for (const [at, kind, byte] of edits) {
    const i = bytes.length === 0 ? 0 : at % bytes.length;
    if (kind === 'insert') bytes.splice(i, 0, byte);
    else if (kind === 'replace') bytes[i] = byte;
    else bytes.splice(i, 1);
  }
  return Buffer.from(bytes);
}

describe('readTopLevelFields', () => {
  it('answers ordinary objects exactly as JSON.parse reads them, duplicate keys included', () => {
    let answered = 0;
    fc.assert(
      fc.property(objectText, (text) => {
        if (read(text) !== null) answered++;
      }),
      { numRuns: 3000, seed: SEED },
    );
    // Unsure only for keys with escapes or `__proto__`: most generated bodies get an answer.
    expect(answered).toBeGreaterThan(1000);
  });

  it('never answers differently from the parse, whatever bytes are broken or inserted', () => {
    fc.assert(
      fc.property(objectText, fc.array(edit, { minLength: 1, maxLength: 4 }), (text, edits) => {
        agreesWithParse(mutate(text, edits));
      }),
      { numRuns: 20000, seed: SEED },
    );
  });

  it('reads a chat body, spaced or not', () => {
    const body = { model: 'llama-3', messages: [{ role: 'user', content: 'hi' }], stream: true };
    expect(read(JSON.stringify(body))).toEqual({ model: 'llama-3', stream: true });
    expect(read(JSON.stringify(body, null, '\t'))).toEqual({ model: 'llama-3', stream: true });
    expect(read('{}')).toEqual({ model: undefined, stream: false });
  });

  it('takes only the top-level model, the last one when repeated', () => {
    expect(read('{"a":{"model":"inner"},"b":["model","x"]}')?.model).toBeUndefined();
    expect(read('{"x":"\\"model\\":\\"m\\"","model":"top"}')?.model).toBe('top');
    expect(read('{"model":"a","model":"b"}')?.model).toBe('b');
    expect(read('{"model":"a","model":1}')?.model).toBeUndefined();
    expect(read('{"model":{"model":"m"}}')?.model).toBeUndefined();
    expect(read('{"stream":true,"stream":false}')?.stream).toBe(false);
    expect(read('{"stream":"true"}')?.stream).toBe(false);
  });

  it('decodes escapes and UTF-8 in the model as the parse does', () => {
    expect(read('{"model":"a\\"b\\u00e9\\n\\/"}')?.model).toBe('a"bé\n/');
    expect(read('{"model":"modèle-日本-🦙"}')?.model).toBe('modèle-日本-🦙');
    const broken = Buffer.concat([
      Buffer.from('{"model":"m'),
      Buffer.from([0xc3, 0xe2, 0x82]),
      Buffer.from('"}'),
    ]);
    // Invalid UTF-8 is no error: the parse and the reader both see U+FFFD (`read` compares).
    expect(read(broken)?.model).toContain('\ufffd');
  });

  it('gives each model its own value when one is read again or after another', () => {
    // The reader keeps the last value decoded; same-length names and escaped spellings differ.
    const names = ['model-a', 'model-b', 'model-a', 'model-\\u0061', 'model-a', 'model-aa'];
    const expected = ['model-a', 'model-b', 'model-a', 'model-a', 'model-a', 'model-aa'];
    expect(names.map((m) => read(`{"model":"${m}"}`)?.model)).toEqual(expected);
    const body = Buffer.from('{"model":"model-b"}');
    expect(read(body)?.model).toBe('model-b');
    body.write('c', 16);
    expect(read(body)?.model).toBe('model-c');
    const long = (c: string): string => `{"model":"${c.repeat(300)}"}`;
    expect([read(long('x'))?.model, read(long('y'))?.model]).toEqual([
      'x'.repeat(300),
      'y'.repeat(300),
    ]);
  });

  it('is unsure of keys it cannot compare without decoding, and of poisoned prototypes', () => {
    expect(read('{"m\\u006fdel":"x"}')).toBeNull();
    expect(read('{"__proto__":{"x":1},"model":"m"}')).toBeNull();
    expect(read('{"model":"m","a":{"constructor":{"prototype":{}}}}')).toBeNull();
    expect(read('{"model":"m","a":[{"__proto__":1}]}')).toBeNull();
  });

  it('is unsure of what is not a JSON object', () => {
    for (const text of [
      '',
      ' ',
      '[{"model":"m"}]',
      '"model"',
      'null',
      '\ufeff{"model":"m"}',
      '{"model":"m"} x',
      '{"model":"m"}{}',
      '{"model":"m",}',
      '{"model":"m" "a":1}',
      '{"model":"m"',
      '{"model":"m}',
      '{"model":"a\tb"}',
      '{"model":"\\x"}',
      '{"model":"\\u12g4"}',
      '{model:"m"}',
      "{'model':'m'}",
      '{"model":"m","n":01}',
      '{"model":"m","n":1.}',
      '{"model":"m","n":.5}',
      '{"model":"m","n":-}',
      '{"model":"m","n":1e}',
      '{"model":"m","n":+1}',
      '{"model":"m","n":tru}',
      '{"model":"m","n":nul}',
      '{"model":"m","n":[1,]}',
      '{"model":"m","n":[1 2]}',
      '{"model":"m"}\u00a0',
    ]) {
      expect(read(text)).toBeNull();
    }
  });

  it('reads numbers and literals the grammar allows', () => {
    const text = '{"a":[0,-0,1.5,-2e10,3E+2,4e-1,true,false,null,{},[]],"model":"m"}';
    expect(read(text)).toEqual({ model: 'm', stream: false });
  });

  it('is unsure beyond the nesting bound, which the parse would refuse', () => {
    const nested = (depth: number): string =>
      `{"model":"m","a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    expect(agreesWithParse(Buffer.from(nested(4)), 4)).not.toBeNull();
    expect(readTopLevelFields(Buffer.from(nested(5)), 4)).toBeNull();
    expect(readTopLevelFields(Buffer.from(nested(MAX_DEPTH + 1)), MAX_DEPTH)).toBeNull();
  });
});
