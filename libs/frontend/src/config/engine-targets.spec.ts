import { parseFrontendFlags } from './parse-frontend-flags';

describe('--engine-target (docs/engines.md)', () => {
  const sut = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseFrontendFlags(argv, env);

  it('takes ENGINE=[NAME=]URL, repeatable, and the comma-separated env form', () => {
    expect(
      sut([
        '--engine-target',
        'vllm=http://127.0.0.1:8001',
        '--engine-target',
        'sglang=gpu-b=http://10.0.0.6:30000',
      ]).engineTargets,
    ).toEqual([
      { engine: 'vllm', spec: 'http://127.0.0.1:8001' },
      { engine: 'sglang', spec: 'gpu-b=http://10.0.0.6:30000' },
    ]);
    expect(
      sut([], { SLUICE_ENGINE_TARGET: 'llamacpp=http://a:8080,tgi=t=http://b:80' }).engineTargets,
    ).toEqual([
      { engine: 'llamacpp', spec: 'http://a:8080' },
      { engine: 'tgi', spec: 't=http://b:80' },
    ]);
    expect(sut([]).engineTargets).toEqual([]);
  });

  it.each([
    ['trtllm=http://h:1', /ENGINE one of vllm, sglang, llamacpp, tgi/],
    ['http://h:1', /ENGINE one of/],
    ['vllm=ftp://h:1', /not an http\(s\) URL/],
    ['vllm=http://user:pw@h:1', /no query, fragment or credentials/],
  ])('refuses %s, naming the flag', (item, why) => {
    expect(() => sut(['--engine-target', item])).toThrow(/--engine-target/);
    expect(() => sut(['--engine-target', item])).toThrow(why);
  });

  it('does not echo the password of a URL with credentials', () => {
    expect(() => sut(['--engine-target', 'vllm=http://user:s3cret@h:1'])).toThrow(
      /'vllm=http:\/\/\*\*\*@h:1'/,
    );
    expect(() => sut(['--engine-target', 'vllm=http://user:s3cret@h:1'])).not.toThrow(/s3cret/);
  });

  it('says how the llama.cpp targets hold their KV cache: per slot unless told', () => {
    expect(sut([]).llamacppKvCache).toBe('per-slot');
    expect(sut(['--llamacpp-kv-cache', 'unified']).llamacppKvCache).toBe('unified');
    expect(sut([], { SLUICE_LLAMACPP_KV_CACHE: 'unified' }).llamacppKvCache).toBe('unified');
    expect(() => sut(['--llamacpp-kv-cache', 'shared'])).toThrow(/--llamacpp-kv-cache/);
  });
});
