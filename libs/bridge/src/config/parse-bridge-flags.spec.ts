import { BridgeConfigError } from './bridge-config.error';
import { parseBridgeFlags } from './parse-bridge-flags';

const BASE = ['--engine', 'vllm', '--nats-url', 'nats://127.0.0.1:4222', '--target', 'http://a:1'];

describe('parseBridgeFlags', () => {
  it('applies the defaults of docs/engines.md', () => {
    expect(parseBridgeFlags(BASE)).toEqual({
      engine: 'vllm',
      targets: ['http://a:1'],
      targetsFile: undefined,
      dnsTargets: [],
      scrapeIntervalMs: 250,
      scrapeTimeoutMs: 1000,
      downAfterMs: 3000,
      model: undefined,
      maxNumBatchedTokens: undefined,
      llamacppKvCache: 'per-slot',
      namespace: 'dynamo',
      natsUrl: 'nats://127.0.0.1:4222',
      httpHost: '0.0.0.0',
      httpPort: 9400,
    });
  });

  it('reads repeatable flags and SLUICE_* variables (lists comma-separated)', () => {
    const sut = parseBridgeFlags([], {
      SLUICE_ENGINE: 'tgi',
      SLUICE_NATS_URL: 'nats://n:4222',
      SLUICE_TARGET: 'a=http://a:1, http://b:2',
      SLUICE_DNS_TARGET: 'svc.local:80',
      SLUICE_DOWN_AFTER_MS: '5000',
      SLUICE_MAX_NUM_BATCHED_TOKENS: '8192',
      SLUICE_LLAMACPP_KV_CACHE: 'unified',
    });
    expect(sut).toMatchObject({
      engine: 'tgi',
      targets: ['a=http://a:1', 'http://b:2'],
      dnsTargets: ['svc.local:80'],
      downAfterMs: 5000,
      maxNumBatchedTokens: 8192,
      llamacppKvCache: 'unified',
    });
    expect(parseBridgeFlags([...BASE, '--target', 'http://c:3']).targets).toEqual([
      'http://a:1',
      'http://c:3',
    ]);
  });

  it.each([
    [['--engine', 'triton'], '--engine', 'triton'],
    [['--scrape-interval-ms', '0'], '--scrape-interval-ms', '0'],
    [['--scrape-timeout-ms', '1.5'], '--scrape-timeout-ms', '1.5'],
    [['--down-after-ms', '-1'], '--down-after-ms', '-1'],
    [['--max-num-batched-tokens', 'lots'], '--max-num-batched-tokens', 'lots'],
    [['--llamacpp-kv-cache', 'shared'], '--llamacpp-kv-cache', 'shared'],
    [['--http-port', '70000'], '--http-port', '70000'],
    [['--namespace', 'a.b'], '--namespace', 'a.b'],
    [['--target', 'localhost:8000'], '--target', 'localhost:8000'],
    [['--dns-target', 'svc'], '--dns-target', 'svc'],
  ])('refuses %p naming the flag and the value', (extra, flag, value) => {
    const args = [...BASE];
    const at = args.indexOf(extra[0]);
    if (at >= 0) args.splice(at, 2);
    expect(() => parseBridgeFlags([...args, ...extra])).toThrow(
      expect.objectContaining({ flag, value }) as BridgeConfigError,
    );
  });

  it('requires an engine, a NATS URL and at least one target source', () => {
    expect(() => parseBridgeFlags(BASE.slice(2))).toThrow(/--engine/);
    expect(() => parseBridgeFlags(['--engine', 'vllm', '--target', 'http://a:1'])).toThrow(
      /--nats-url/,
    );
    expect(() => parseBridgeFlags(BASE.slice(0, 4))).toThrow(/no targets/);
    expect(() => parseBridgeFlags([...BASE, '--nats-url', 'http://x'])).toThrow(BridgeConfigError);
  });
});
