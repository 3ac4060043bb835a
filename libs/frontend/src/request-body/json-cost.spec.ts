import fc from 'fast-check';
import {
  countJson,
  JsonCost,
  jsonBodyRefusal,
  JsonCounts,
  JsonLimits,
  MAX_JSON_DEPTH,
  MAX_JSON_NODES,
  MAX_JSON_VALUES,
} from './json-cost';

/** Fixed so a failure replays; fast-check prints the counterexample and its seed. */
const SEED = 20261201;
const UNBOUNDED = { maxDepth: Infinity, maxValues: Infinity, maxNodes: Infinity };

/** What the scanner should count, computed from the parsed value. */
function reference(value: unknown): Omit<JsonCounts, 'over'> {
  if (typeof value !== 'object' || value === null) return { depth: 0, values: 1, nodes: 0 };
  const children = Array.isArray(value) ? value : Object.values(value);
  const keys = Array.isArray(value) ? 0 : children.length;
  const counts = { depth: 1, values: 1 + keys, nodes: 1 + keys };
  for (const child of children) {
    const c = reference(child);
    counts.depth = Math.max(counts.depth, c.depth + 1);
    counts.values += c.values;
    counts.nodes += c.nodes;
  }
  return counts;
}

/** The frontend's parse: the scan, then JSON.parse. */
function parseBounded(text: string): unknown {
  const refusal = jsonBodyRefusal(Buffer.from(text));
  if (refusal !== undefined) throw new Error(refusal);
  return JSON.parse(text);
}

/** Strings with quotes, backslashes, control characters and non-ASCII, as keys and values. */
const json = fc.jsonValue({ maxDepth: 6, stringUnit: 'binary' });
const indent = fc.constantFrom<string | number | undefined>(undefined, 0, 1, 2, '\t', ' \r\n');
const repeat = (unit: string, n: number): string => `[${`${unit},`.repeat(n - 1)}${unit}]`;

describe('countJson', () => {
  it('counts exactly what JSON.parse builds, whatever the strings and whitespace', () => {
    fc.assert(
      fc.property(json, indent, (value, space) => {
        const text = JSON.stringify(value, null, space);
        expect(countJson(Buffer.from(text), UNBOUNDED)).toEqual(reference(JSON.parse(text)));
      }),
      { numRuns: 2000, seed: SEED },
    );
  });

  it('is not fooled by escaped quotes and backslash runs', () => {
    const text = String.raw`{"a\"":"\\","b":"\\\"[[[{","c":["\\\\",{}]}`;
    expect(countJson(Buffer.from(text), UNBOUNDED)).toEqual(reference(JSON.parse(text)));
  });

  it('stops counting at the first limit it goes over', () => {
    const limits = { maxDepth: 3, maxValues: 5, maxNodes: 4 };
    expect(countJson(Buffer.from('[[[[1]]]]'), limits).over).toBe('maxDepth');
    expect(countJson(Buffer.from('[1,2,3,4,5]'), limits).over).toBe('maxValues');
    expect(countJson(Buffer.from('[[],[],[],[]]'), limits).over).toBe('maxNodes');
    expect(countJson(Buffer.from('[[],[],[]]'), limits).over).toBeUndefined();
  });
});

/** Counts `bytes` pushed in pieces cut at `cuts` (any order, any repeats: empty pieces too). */
function countInPieces(bytes: Buffer, cuts: number[], limits: JsonLimits): JsonCounts {
  const at = cuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b);
  const cost = new JsonCost(limits);
  let from = 0;
  for (const to of [...at, bytes.length]) {
    cost.push(bytes.subarray(from, to));
    from = to;
  }
  return cost.counts();
}

/** Counts `text` pushed one byte at a time. */
function countByteByByte(text: string, limits: JsonLimits = UNBOUNDED): JsonCounts {
  const bytes = Buffer.from(text);
  return countInPieces(
    bytes,
    Array.from({ length: bytes.length }, (_, i) => i),
    limits,
  );
}

describe('JsonCost, pushed in pieces', () => {
  it('counts what the whole text counts, wherever the pieces are cut', () => {
    fc.assert(
      fc.property(json, indent, fc.array(fc.nat(), { maxLength: 12 }), (value, space, cuts) => {
        const bytes = Buffer.from(JSON.stringify(value, null, space));
        expect(countInPieces(bytes, cuts, UNBOUNDED)).toEqual(
          reference(JSON.parse(bytes.toString())),
        );
      }),
      { numRuns: 2000, seed: SEED },
    );
  });

  it('counts strings full of escapes cut anywhere, one byte at a time included', () => {
    const escapes = fc.string({ unit: fc.constantFrom('\\', '"', '[', '{', ',', ':', 'é') });
    const value = fc.oneof(fc.array(escapes), fc.dictionary(escapes, fc.array(escapes)));
    fc.assert(
      fc.property(value, fc.array(fc.nat(), { maxLength: 40 }), (v, cuts) => {
        const text = JSON.stringify(v);
        const counts = reference(JSON.parse(text));
        expect(countInPieces(Buffer.from(text), cuts, UNBOUNDED)).toEqual(counts);
        expect(countByteByByte(text)).toEqual(counts);
      }),
      { numRuns: 1000, seed: SEED },
    );
  });

  it('goes over the same limit as the whole text, with the same counts, on any bytes', () => {
    const limits = { maxDepth: 4, maxValues: 12, maxNodes: 6 };
    const text = fc.oneof(
      fc.tuple(json, indent).map(([v, space]) => JSON.stringify(v, null, space)),
      fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', ',', ':', '1', ' ') }),
    );
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 12 }), (t, cuts) => {
        const bytes = Buffer.from(t);
        expect(countInPieces(bytes, cuts, limits)).toEqual(countJson(bytes, limits));
      }),
      { numRuns: 3000, seed: SEED },
    );
  });

  it.each([
    ['an escaped quote cut after its backslash', String.raw`["a\"],[","b"]`],
    ['an escaped backslash cut in two, then the closing quote', String.raw`["a\\",[1]]`],
    ['a run of backslashes before an escaped quote', String.raw`{"k\\\\\\\"[{":[[],{}]}`],
    [
      'a unicode escape and multi-byte characters',
      String.raw`{"\u0022":"é😀\\","x":[{"y":"\u005c"}]}`,
    ],
    [
      'tokens and keys across pieces',
      '{ "model" : "m" , "messages" : [ { } , [ 1 , 2.5e3 , true ] ] }',
    ],
  ])('counts %s one byte at a time', (_, text) => {
    expect(countByteByByte(text)).toEqual(reference(JSON.parse(text)));
  });

  it('carries an escape over empty pieces', () => {
    const cost = new JsonCost(UNBOUNDED);
    const pieces = ['["a\\', '', '', '"]', '",[', '', '1]]'];
    for (const piece of pieces) cost.push(Buffer.from(piece));
    // Had the escape been dropped, the string would close after `a\` and `,[1]` be in a string.
    expect(cost.counts()).toEqual(reference(JSON.parse(pieces.join(''))));
  });

  it('stops in the piece that goes over a limit, and ignores every later piece', () => {
    const cost = new JsonCost({ maxDepth: 3, maxValues: 100, maxNodes: 4 });
    expect(cost.push(Buffer.from('[[],['))).toBeUndefined();
    // The fourth container is in the middle of this piece, the fifth goes over.
    expect(cost.push(Buffer.from('],[],[],[],[],'))).toBe('maxNodes');
    expect(cost.counts()).toMatchObject({ nodes: 5, over: 'maxNodes' });
    expect(cost.push(Buffer.from('[[[[[[[[[[[[[['))).toBe('maxNodes');
    expect(cost.counts()).toMatchObject({ depth: 2, nodes: 5, over: 'maxNodes' });
  });

  it.each<[keyof JsonLimits, string[]]>([
    ['maxDepth', ['{"a":[[', '[[1]]]]}']],
    ['maxValues', ['[1,2,', '3', ',4,5,6]']],
    ['maxNodes', ['{"a":{},', '"b":{}', '}']],
  ])('goes over %s in a later piece, where the whole text does', (limit, pieces) => {
    const limits = { maxDepth: 3, maxValues: 5, maxNodes: 4 };
    const cost = new JsonCost(limits);
    const overs = pieces.map((p) => cost.push(Buffer.from(p)));
    expect(overs[0]).toBeUndefined();
    expect(overs.at(-1)).toBe(limit);
    expect(cost.counts()).toEqual(countJson(Buffer.from(pieces.join('')), limits));
  });
});

describe('jsonBodyRefusal', () => {
  it('never refuses valid JSON under the limits, never lets through what JSON.parse refuses', () => {
    const text = fc.oneof(
      fc.tuple(json, indent).map(([v, space]) => JSON.stringify(v, null, space)),
      // Valid JSON broken at one place: cut short, or a byte replaced.
      fc
        .tuple(json, fc.nat(), fc.constantFrom('"', '\\', '[', ']', '{', '}', ',', ':', 'x', ''))
        .map(([v, at, c]) => {
          const s = JSON.stringify(v);
          const i = at % (s.length + 1);
          return s.slice(0, i) + c + s.slice(i + 1);
        }),
      fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', ',', ':', '1', ' ') }),
    );
    fc.assert(
      fc.property(text, (t) => {
        let expected: unknown;
        try {
          expected = JSON.parse(t);
        } catch {
          expect(() => parseBounded(t)).toThrow();
          return;
        }
        const c = reference(expected);
        const under =
          c.depth <= MAX_JSON_DEPTH && c.values <= MAX_JSON_VALUES && c.nodes <= MAX_JSON_NODES;
        if (under) expect(parseBounded(t)).toEqual(expected);
        else expect(() => parseBounded(t)).toThrow();
      }),
      { numRuns: 3000, seed: SEED },
    );
  });

  it.each(['[', '{"a":'])('allows %s nesting to exactly MAX_JSON_DEPTH levels', (open) => {
    const close = open === '[' ? ']' : '}';
    const at = (d: number): Buffer =>
      Buffer.from(`${open.repeat(d)}${open === '[' ? '' : '1'}${close.repeat(d)}`.padEnd(300));
    expect(jsonBodyRefusal(at(MAX_JSON_DEPTH))).toBeUndefined();
    expect(jsonBodyRefusal(at(MAX_JSON_DEPTH + 1))).toMatch(/nested deeper than 128 levels/);
    expect(jsonBodyRefusal(at(1_000_000))).toMatch(/nested deeper/);
  });

  it('allows exactly MAX_JSON_VALUES values and MAX_JSON_NODES objects, arrays and keys', () => {
    expect(jsonBodyRefusal(Buffer.from(repeat('0', MAX_JSON_VALUES - 1)))).toBeUndefined();
    expect(jsonBodyRefusal(Buffer.from(repeat('0', MAX_JSON_VALUES)))).toMatch(
      /more than 1000000 values and keys/,
    );
    expect(jsonBodyRefusal(Buffer.from(repeat('{}', MAX_JSON_NODES - 1)))).toBeUndefined();
    expect(jsonBodyRefusal(Buffer.from(repeat('[]', MAX_JSON_NODES)))).toMatch(
      /more than 200000 objects, arrays and keys/,
    );
  });

  it('passes large legitimate bodies: a 10 MB prompt, 300k token ids, a long history', () => {
    const prompt = { model: 'm', prompt: 'lorem "ipsum" \\ dolor '.repeat(500_000) };
    const ids = {
      model: 'm',
      input: Array.from({ length: 300 }, () => new Array<number>(1000).fill(42)),
    };
    const history = {
      model: 'm',
      messages: Array.from({ length: 20_000 }, (_, i) => ({ role: 'user', content: `turn ${i}` })),
    };
    for (const body of [prompt, ids, history])
      expect(jsonBodyRefusal(Buffer.from(JSON.stringify(body)))).toBeUndefined();
  });
});
