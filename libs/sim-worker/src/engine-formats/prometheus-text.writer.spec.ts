import { formatValue, PrometheusTextWriter } from './prometheus-text.writer';

describe('formatValue', () => {
  // Expected strings are what prometheus_client's floatToGoString prints for the same float.
  it.each([
    [0, '0.0'],
    [3, '3.0'],
    [-5, '-5.0'],
    [0.87, '0.87'],
    [1 / 3, '0.3333333333333333'],
    [6.103515625e-5, '6.103515625e-05'],
    [2.5e-7, '2.5e-07'],
    [123456.5, '123456.5'],
    [1234567, '1.234567e+06'],
    [10000000, '1e+07'],
    [1764470000, '1.76447e+09'],
    [1764470000.123, '1.764470000123e+09'],
    [12345678901, '1.2345678901e+010'],
    [-1234567, '-1234567.0'],
    [1e16, '1e+16'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
    [NaN, 'NaN'],
  ])('writes %p as %s', (value, text) => {
    expect(formatValue(value)).toBe(text);
  });
});

describe('PrometheusTextWriter', () => {
  it('writes HELP and TYPE, then one line per sample with its labels sorted by name', () => {
    const sut = new PrometheusTextWriter().gauge('x:g', 'A gauge.', [
      { labels: { model_name: 'm', engine: '0' }, value: 1 },
      { labels: { model_name: 'm', engine: '1' }, value: 0.5 },
    ]);
    expect(sut.toString()).toBe(
      '# HELP x:g A gauge.\n' +
        '# TYPE x:g gauge\n' +
        'x:g{engine="0",model_name="m"} 1.0\n' +
        'x:g{engine="1",model_name="m"} 0.5\n',
    );
  });

  it('writes a counter as _total, then its _created gauge when given a creation time', () => {
    const samples = [{ labels: { a: '1' }, value: 7 }];
    const sut = new PrometheusTextWriter()
      .counter('x:c', 'Counted.', samples, 1764470000)
      .counter('x:d', 'No created.', samples);
    expect(sut.toString()).toBe(
      '# HELP x:c_total Counted.\n' +
        '# TYPE x:c_total counter\n' +
        'x:c_total{a="1"} 7.0\n' +
        '# HELP x:c_created Counted.\n' +
        '# TYPE x:c_created gauge\n' +
        'x:c_created{a="1"} 1.76447e+09\n' +
        '# HELP x:d_total No created.\n' +
        '# TYPE x:d_total counter\n' +
        'x:d_total{a="1"} 7.0\n',
    );
  });

  it('escapes label values and help text, and omits the braces without labels', () => {
    const sut = new PrometheusTextWriter().gauge('x', 'back\\slash\nnewline', [
      { labels: { model_name: 'a"b\\c\nd' }, value: 1 },
      { labels: {}, value: 2 },
    ]);
    expect(sut.toString().split('\n')).toEqual([
      '# HELP x back\\\\slash\\nnewline',
      '# TYPE x gauge',
      'x{model_name="a\\"b\\\\c\\nd"} 1.0',
      'x 2.0',
      '',
    ]);
  });
});
