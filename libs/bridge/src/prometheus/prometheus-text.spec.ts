import { UnparsableError } from '../engines/unparsable.error';
import { readFamilies } from './prometheus-text';

describe('readFamilies', () => {
  it('reads only the families asked for, with labels and values', () => {
    const sut = readFamilies(
      '# HELP a_b x\n# TYPE a_b gauge\na_b{x="1",y="two words"} 3.5\na_bc 9\nb 2\n  c{z="\\"q\\""} 1e3\n',
      ['a_b', 'c', 'missing'],
    );
    expect(sut.get('a_b')).toEqual([
      { name: 'a_b', labels: { x: '1', y: 'two words' }, value: 3.5 },
    ]);
    expect(sut.get('c')).toEqual([{ name: 'c', labels: { z: '"q"' }, value: 1000 }]);
    expect(sut.get('missing')).toEqual([]);
  });

  it('gives NaN for values that are not numbers, so adapters can refuse them', () => {
    const sut = readFamilies('a NaN\nb +Inf\nc \nd x\n', ['a', 'b', 'c', 'd']);
    expect([...sut.values()].map((s) => Number.isNaN(s[0]?.value ?? NaN))).toEqual([
      true,
      true,
      true,
      true,
    ]);
  });

  it('fails on a malformed line of a wanted family only', () => {
    expect(() => readFamilies('a{x="1" 2\n', ['a'])).toThrow(UnparsableError);
    expect(readFamilies('b{x="1" 2\n}}}\na 1\n', ['a']).get('a')?.[0].value).toBe(1);
  });

  it('does bounded work on a large body of unwanted lines', () => {
    const junk = 'junk_metric{label="xxxxxxxxxxxxxxxx"} 1\n'.repeat(100_000);
    expect(readFamilies(`${junk}a 7\n`, ['a']).get('a')?.[0].value).toBe(7);
  });
});
