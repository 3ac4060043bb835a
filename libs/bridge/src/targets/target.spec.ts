import {
  parseDnsTarget,
  parseTargetSpec,
  parseTargetsFile,
  targetForAddress,
  TargetSpecError,
} from './target';

describe('target specs', () => {
  it.each([
    ['http://10.0.0.1:8000', { workerId: '10.0.0.1:8000', url: 'http://10.0.0.1:8000' }],
    ['http://engine-a/', { workerId: 'engine-a:80', url: 'http://engine-a' }],
    ['https://engine-a', { workerId: 'engine-a:443', url: 'https://engine-a' }],
    ['w-1=http://10.0.0.1:8000', { workerId: 'w-1', url: 'http://10.0.0.1:8000' }],
    [
      'gpu0:a@b=http://[::1]:30000/v1base/',
      { workerId: 'gpu0:a@b', url: 'http://[::1]:30000/v1base' },
    ],
  ])('parses %s', (spec, target) => {
    expect(parseTargetSpec(spec)).toEqual(target);
  });

  it.each([
    '',
    'localhost:8000',
    'ftp://x',
    'w=',
    'http://x/?a=b',
    'http://u:p@x',
    `${'w'.repeat(300)}=http://x`,
  ])('refuses %p', (spec) => {
    expect(() => parseTargetSpec(spec)).toThrow(TargetSpecError);
  });

  it('reads a targets file with comments and blank lines, naming bad lines', () => {
    const sut = parseTargetsFile(
      '# fleet\n\na=http://10.0.0.1:8000  # gpu box\nhttp://10.0.0.2:8000\r\nnot a url\n',
    );
    expect(sut.targets.map((t) => t.workerId)).toEqual(['a', '10.0.0.2:8000']);
    expect(sut.errors).toEqual([expect.stringMatching(/^line 5: /)]);
  });

  it('parses NAME:PORT and builds targets for IPv4 and IPv6 addresses', () => {
    expect(parseDnsTarget('vllm.default.svc.cluster.local:8000')).toEqual({
      name: 'vllm.default.svc.cluster.local',
      port: 8000,
    });
    expect(() => parseDnsTarget('vllm')).toThrow(TargetSpecError);
    expect(() => parseDnsTarget('vllm:0')).toThrow(TargetSpecError);
    expect(targetForAddress('fd00::1', 8000)).toEqual({
      workerId: '[fd00::1]:8000',
      url: 'http://[fd00::1]:8000',
    });
  });
});
