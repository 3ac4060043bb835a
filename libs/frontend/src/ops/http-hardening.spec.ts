import { MAX_JSON_DEPTH, nestedDeeperThan } from './http-hardening';

/** `depth` levels of arrays or objects, built without recursion. */
function nested(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [0, value] : { a: 'x', b: value };
  return value;
}

describe('nestedDeeperThan', () => {
  it.each(['array', 'object'] as const)('counts %s levels exactly', (kind) => {
    expect(nestedDeeperThan(nested(MAX_JSON_DEPTH, kind), MAX_JSON_DEPTH)).toBe(false);
    expect(nestedDeeperThan(nested(MAX_JSON_DEPTH + 1, kind), MAX_JSON_DEPTH)).toBe(true);
  });

  it('finds the deep branch among shallow siblings', () => {
    const body = {
      model: 'm',
      messages: [{ content: 'hi' }],
      tools: [{}, nested(MAX_JSON_DEPTH, 'object')],
    };
    expect(nestedDeeperThan(body, MAX_JSON_DEPTH)).toBe(true);
  });

  it('stops at the limit, so a body far deeper than the stack allows cannot overflow it', () => {
    expect(nestedDeeperThan(nested(1_000_000, 'array'), MAX_JSON_DEPTH)).toBe(true);
  });

  it('treats scalars as depth 0', () => {
    for (const v of [null, 1, 'x', true]) expect(nestedDeeperThan(v, 0)).toBe(false);
  });
});
