import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UnparsableError } from '../unparsable.error';
import { pickSampleLines, readFamilies } from './prometheus-text';

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

/** The line splitter readFamilies used before: every line sliced and trimmed. */
function linesBySplitting(text: string, names: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.length === 0 || line.startsWith('#')) continue;
    if (names.some((n) => line.startsWith(n) && /^[{ \t]/.test(line.slice(n.length)))) {
      out.push(line);
    }
  }
  return out;
}

describe('pickSampleLines', () => {
  const FIXTURES = join(__dirname, '../../../../test/fixtures/engines');
  const cases: Array<[string, string[]]> = [
    [
      'vllm/metrics-v0.11-dp2.txt',
      [
        'vllm:kv_cache_usage_perc',
        'vllm:gpu_cache_usage_perc',
        'vllm:cache_config_info',
        'vllm:num_requests_waiting',
      ],
    ],
    [
      'vllm/metrics-v0.6-single.txt',
      [
        'vllm:kv_cache_usage_perc',
        'vllm:gpu_cache_usage_perc',
        'vllm:cache_config_info',
        'vllm:num_requests_waiting',
      ],
    ],
    [
      'sglang/metrics.txt',
      ['sglang:num_used_tokens', 'sglang:max_total_num_tokens', 'sglang:num_queue_reqs'],
    ],
    [
      'llamacpp/0.7.0/metrics-busy.txt',
      ['llamacpp:requests_processing', 'llamacpp:requests_deferred'],
    ],
    [
      'tgi/metrics.txt',
      ['tgi_batch_current_max_tokens', 'tgi_batch_max_total_tokens', 'tgi_queue_size'],
    ],
    [
      'tgi/metrics-v2.txt',
      ['tgi_batch_current_max_tokens', 'tgi_batch_max_total_tokens', 'tgi_queue_size'],
    ],
  ];

  it.each(cases)('picks the same lines and values as splitting every line (%s)', (file, names) => {
    const text = readFileSync(join(FIXTURES, file), 'utf8');
    const picked = pickSampleLines(text, names);
    const expected = linesBySplitting(text, names);
    expect(picked.length).toBeGreaterThan(0);
    expect([...picked].sort()).toEqual([...expected].sort());
    const families = readFamilies(text, names);
    for (const name of names) {
      expect(families.get(name)?.length).toBe(expected.filter((l) => isOf(l, name)).length);
    }
  });

  it('ignores comments, longer names, names inside other lines, and keeps leading blanks and CRLF out', () => {
    const text = [
      '# HELP a the a',
      '# TYPE a gauge',
      'a{x="1"} 1\r',
      'ab 2',
      'b{x="a 3"} 3',
      'xa 4',
      '  \ta 5  ',
      'a',
      'a\t6',
    ].join('\n');
    expect(pickSampleLines(text, ['a'])).toEqual(['a{x="1"} 1', 'a 5', 'a\t6']);
    expect(pickSampleLines(`a 1`, ['a'])).toEqual(['a 1']);
    expect(pickSampleLines('', ['a'])).toEqual([]);
  });

  it('ignores malformed lines of other families, also when they mention a wanted name', () => {
    const text = 'b{x="a 1" 2\n}}} a 3\nb{{{a{ 4\na 7\nc{y=a 1\n';
    expect(readFamilies(text, ['a']).get('a')).toEqual([{ name: 'a', labels: {}, value: 7 }]);
  });
});

function isOf(line: string, name: string): boolean {
  return line.startsWith(name) && /^[{ \t]/.test(line.slice(name.length));
}
