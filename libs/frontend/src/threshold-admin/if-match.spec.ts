import { BadRequestException } from '@nestjs/common';
import { etagOf, parseIfMatch } from './if-match';

describe('If-Match', () => {
  it('writes a version as a strong entity tag', () => {
    expect(etagOf('42')).toBe('"42"');
  });

  it('is absent when the header is', () => {
    expect(parseIfMatch(undefined)).toBeUndefined();
  });

  it('reads *, one tag, and a list (empty elements allowed, weak tags never match)', () => {
    expect(parseIfMatch('*')).toEqual({ any: true });
    expect(parseIfMatch(' * ')).toEqual({ any: true });
    expect(parseIfMatch('"42"')).toEqual({ versions: ['42'] });
    expect(parseIfMatch('"1", W/"2" ,, "3",')).toEqual({ versions: ['1', '3'] });
    expect(parseIfMatch('W/"2"')).toEqual({ versions: [] });
    expect(parseIfMatch('"a,b"')).toEqual({ versions: ['a,b'] });
  });

  it.each(['', ' ', '42', '"42', '"4"2"', '*, "1"', '"1" "2"', 'w/"1"', '"\u0001"'])(
    'refuses %j with a 400',
    (header) => {
      expect(() => parseIfMatch(header)).toThrow(BadRequestException);
    },
  );
});
