import { FrontendConfig } from './frontend-config';
import { FrontendConfigError } from './frontend-config.error';
import { errorOf } from './flag-error.fixture';
import { envName, parseFrontendFlags } from './parse-frontend-flags';

describe('parseFrontendFlags', () => {
  const sut = parseFrontendFlags;

  it('applies the contract defaults with no flags and no environment', () => {
    expect(sut([], {})).toEqual(new FrontendConfig());
    expect(sut([])).toMatchObject({
      httpHost: '0.0.0.0',
      httpPort: 8000,
      admissionControl: 'none',
      thresholds: {
        activeDecodeBlocks: null,
        activePrefillTokens: null,
        activePrefillTokensFrac: null,
        waitingRequests: null,
      },
      routerMode: 'round-robin',
      routerQueueThreshold: null,
      routerQueueMaxDepth: 1024,
      routerQueueTimeoutMs: 30000,
      retryAfterSecs: 1,
      workerTtlMs: 10000,
      natsUrl: null,
      namespace: 'dynamo',
      busyReleaseFactor: 1,
      busyMinDwellMs: 0,
    });
  });

  it('reads every flag, in --flag value and --flag=value forms', () => {
    const config = sut(
      [
        '--http-host=127.0.0.1 --http-port 9000 --admission-control=token-capacity',
        '--active-decode-blocks-threshold 0.85 --active-prefill-tokens-threshold=4096',
        '--active-prefill-tokens-threshold-frac=1.5 --waiting-requests-threshold 8',
        '--router-mode=least-loaded',
        '--router-queue-threshold=2.5 --router-queue-max-depth=0 --router-queue-timeout-ms=250',
        '--retry-after-secs=0 --worker-ttl-ms=3000 --nats-url=nats://127.0.0.1:4222',
        '--namespace=prod_a-1 --max-workers=10 --upstream-timeout-ms=1000 --body-limit-bytes=1024',
      ]
        .join(' ')
        .split(' '),
    );
    expect(config).toEqual(
      new FrontendConfig({
        httpHost: '127.0.0.1',
        httpPort: 9000,
        admissionControl: 'token-capacity',
        thresholds: {
          activeDecodeBlocks: 0.85,
          activePrefillTokens: 4096,
          activePrefillTokensFrac: 1.5,
          waitingRequests: 8,
        },
        routerMode: 'least-loaded',
        routerQueueThreshold: 2.5,
        routerQueueMaxDepth: 0,
        routerQueueTimeoutMs: 250,
        retryAfterSecs: 0,
        workerTtlMs: 3000,
        natsUrl: 'nats://127.0.0.1:4222',
        namespace: 'prod_a-1',
        maxWorkers: 10,
        upstreamTimeoutMs: 1000,
        bodyLimitBytes: 1024,
      }),
    );
  });

  const flat = (c: FrontendConfig): Record<string, unknown> => ({ ...c, ...c.thresholds });
  it.each([
    ['--http-port', '0', 'httpPort', 0],
    ['--http-port', '65535', 'httpPort', 65535],
    ['--active-decode-blocks-threshold', '0', 'activeDecodeBlocks', 0],
    ['--active-decode-blocks-threshold', '1', 'activeDecodeBlocks', 1],
    ['--active-prefill-tokens-threshold', '0', 'activePrefillTokens', 0],
    ['--active-prefill-tokens-threshold-frac', '0', 'activePrefillTokensFrac', 0],
    ['--waiting-requests-threshold', '0', 'waitingRequests', 0],
    ['--waiting-requests-threshold', '9007199254740991', 'waitingRequests', 9007199254740991],
    ['--router-queue-threshold', '0', 'routerQueueThreshold', 0],
    ['--router-queue-timeout-ms', '1', 'routerQueueTimeoutMs', 1],
    ['--worker-ttl-ms', '1', 'workerTtlMs', 1],
    ['--nats-url', 'tls://nats.example:4222', 'natsUrl', 'tls://nats.example:4222'],
    ['--router-mode', 'random', 'routerMode', 'random'],
    ['--admission-control', 'shadow', 'admissionControl', 'shadow'],
    ['--retry-after-secs', 'auto', 'retryAfterSecs', 'auto'],
    ['--retry-after-secs', '0', 'retryAfterSecs', 0],
    ['--retry-after-secs', '3600', 'retryAfterSecs', 3600],
    ['--busy-release-factor', '1', 'busyReleaseFactor', 1],
    ['--busy-release-factor', '0.001', 'busyReleaseFactor', 0.001],
    ['--busy-min-dwell-ms', '0', 'busyMinDwellMs', 0],
    ['--busy-min-dwell-ms', '60000', 'busyMinDwellMs', 60000],
    ['--idle-timeout-ms', '1', 'idleTimeoutMs', 1],
    ['--max-upstream-body-bytes', '1024', 'maxUpstreamBodyBytes', 1024],
    ['--ttft-slo-ms', '1', 'ttftSloMs', 1],
    ['--ttft-slo-ms', '500', 'ttftSloMs', 500],
    ['--ttft-slo-sample', '0', 'ttftSloSample', 0],
    ['--ttft-slo-sample', '1', 'ttftSloSample', 1],
    ['--ttft-slo-sample', '0.05', 'ttftSloSample', 0.05],
  ])('accepts the boundary value %s %s', (flag, value, key, expected) => {
    expect(flat(sut([flag, value]))[key]).toBe(expected);
  });

  it.each([
    ['--http-port', '65536'],
    ['--http-port', '80.5'],
    ['--http-port', 'http'],
    ['--http-port', ''],
    ['--http-host', ' '],
    ['--ttft-slo-ms', '0'],
    ['--ttft-slo-ms', '250.5'],
    ['--ttft-slo-ms', '500ms'],
    ['--ttft-slo-sample', '1.5'],
    ['--ttft-slo-sample', '-0.1'],
    ['--ttft-slo-sample', 'NaN'],
    ['--admission-control', 'token_capacity'],
    ['--admission-control', 'TOKEN-CAPACITY'],
    ['--admission-control', 'Shadow'],
    ['--retry-after-secs', 'Auto'],
    ['--retry-after-secs', '1.5'],
    ['--retry-after-secs', ''],
    ['--busy-release-factor', '0'],
    ['--busy-release-factor', '1.5'],
    ['--busy-release-factor', 'half'],
    ['--busy-min-dwell-ms', '1.5'],
    ['--busy-min-dwell-ms', '-1'],
    ['--active-decode-blocks-threshold', '1.01'],
    ['--active-decode-blocks-threshold', 'NaN'],
    ['--active-decode-blocks-threshold', '80%'],
    ['--active-prefill-tokens-threshold', '1.5'],
    ['--active-prefill-tokens-threshold', '9007199254740993'],
    ['--active-prefill-tokens-threshold-frac', 'Infinity'],
    ['--active-prefill-tokens-threshold-frac', 'abc'],
    ['--waiting-requests-threshold', '1.5'],
    ['--waiting-requests-threshold', 'two'],
    ['--waiting-requests-threshold', 'Infinity'],
    ['--waiting-requests-threshold', '9007199254740993'],
    ['--router-mode', 'fastest'],
    ['--router-queue-threshold', 'Infinity'],
    ['--router-queue-max-depth', '2.5'],
    ['--router-queue-timeout-ms', '0'],
    ['--worker-ttl-ms', '0'],
    ['--nats-url', 'http://127.0.0.1:4222'],
    ['--nats-url', '127.0.0.1:4222'],
    ['--nats-url', 'nats://bad host:4222'],
    ['--namespace', 'a.b'],
    ['--namespace', 'a*'],
    ['--max-workers', '0'],
    ['--upstream-timeout-ms', '0'],
    ['--body-limit-bytes', '1023'],
    ['--idle-timeout-ms', '0'],
    ['--idle-timeout-ms', '1.5'],
    ['--max-upstream-body-bytes', '1023'],
    ['--max-upstream-body-bytes', '64MiB'],
  ])('rejects %s %j naming the flag and the value', (flag, value) => {
    const err = errorOf([`${flag}=${value}`]);
    expect(err).toMatchObject({ flag, value });
    expect(err.message).toContain(`'${value}'`);
    expect(err.message).toContain(flag);
  });

  it.each([
    ['--retry-after-secs', '-1'],
    ['--http-port', '-1'],
    ['--active-decode-blocks-threshold', '-0.1'],
    ['--active-decode-blocks-threshold', '-.5'],
    ['--active-prefill-tokens-threshold', '-5'],
    ['--active-prefill-tokens-threshold-frac', '-0.5'],
    ['--waiting-requests-threshold', '-1'],
    ['--router-queue-threshold', '-2'],
    ['--router-queue-max-depth', '-1'],
  ])('reports %s %s (separate argument) as out of range', (flag, value) => {
    const err = errorOf([flag, value]);
    expect(err).toMatchObject({ flag, value });
    expect(err.message).toMatch(/expected .*(>=|in \[)/);
    expect(err.message).not.toMatch(/ambiguous/);
  });

  it('reads the global admission mode into the config and into the global per-model values', () => {
    for (const mode of ['token-capacity', 'shadow', 'none'] as const) {
      const config = sut(['--admission-control', mode]);
      expect(config.admissionControl).toBe(mode);
      expect(config.thresholds.admissionControl).toBe(mode);
    }
    expect(errorOf(['--admission-control', 'always']).message).toContain(
      'expected one of token-capacity, shadow, none',
    );
  });

  it('says what --retry-after-secs takes when refusing a value', () => {
    expect(errorOf(['--retry-after-secs', 'soon']).message).toContain(
      'expected an integer >= 0, or auto',
    );
  });

  it('rejects an unknown flag, naming it', () => {
    const err = errorOf(['--http-prot', '8000']);
    expect(err.flag).toBe('--http-prot');
    expect(err.message).toContain('--http-prot');
  });

  it('keeps admin tokens and database passwords out of an unknown-flag error', () => {
    const err = errorOf([
      '--admin-token=ops:s3cret-token',
      '--database-url=postgres://u:hunter22@db/sluice',
      '--bogus',
    ]);
    expect(`${err.value} ${err.message}`).not.toMatch(/s3cret-token|hunter22/);
  });

  it('rejects a positional argument', () => {
    expect(() => sut(['8000'])).toThrow(FrontendConfigError);
  });

  describe('environment variables', () => {
    it('names each variable SLUICE_ + upper-snake flag name', () => {
      expect(envName('active-prefill-tokens-threshold-frac')).toBe(
        'SLUICE_ACTIVE_PREFILL_TOKENS_THRESHOLD_FRAC',
      );
    });

    it('falls back to non-empty SLUICE_* variables for flags that are not given', () => {
      const env = {
        SLUICE_HTTP_PORT: '9100',
        SLUICE_ADMISSION_CONTROL: 'token-capacity',
        SLUICE_ACTIVE_DECODE_BLOCKS_THRESHOLD: '0.7',
        SLUICE_ROUTER_QUEUE_THRESHOLD: '1.5',
        SLUICE_NATS_URL: 'nats://n:4222',
        SLUICE_NAMESPACE: 'staging',
      };
      expect(sut([], env)).toMatchObject({
        httpPort: 9100,
        admissionControl: 'token-capacity',
        thresholds: { activeDecodeBlocks: 0.7 },
        routerQueueThreshold: 1.5,
        natsUrl: 'nats://n:4222',
        namespace: 'staging',
      });
      expect(sut([], { SLUICE_HTTP_PORT: '' }).httpPort).toBe(8000);
    });

    it('lets a flag win over its environment variable', () => {
      const env = { SLUICE_HTTP_PORT: '9100', SLUICE_RETRY_AFTER_SECS: 'oops' };
      expect(sut(['--http-port=9200', '--retry-after-secs', '3'], env)).toMatchObject({
        httpPort: 9200,
        retryAfterSecs: 3,
      });
    });

    it('reads SLUICE_WAITING_REQUESTS_THRESHOLD, and names it when it is invalid', () => {
      expect(envName('waiting-requests-threshold')).toBe('SLUICE_WAITING_REQUESTS_THRESHOLD');
      const env = { SLUICE_WAITING_REQUESTS_THRESHOLD: '4' };
      expect(sut([], env).thresholds.waitingRequests).toBe(4);
      expect(sut(['--waiting-requests-threshold', '6'], env).thresholds.waitingRequests).toBe(6);
      expect(errorOf([], { SLUICE_WAITING_REQUESTS_THRESHOLD: '-3' })).toMatchObject({
        flag: 'SLUICE_WAITING_REQUESTS_THRESHOLD',
        value: '-3',
      });
    });

    it('names the variable and the value when the variable is invalid', () => {
      expect(errorOf([], { SLUICE_RETRY_AFTER_SECS: '-1' })).toMatchObject({
        flag: 'SLUICE_RETRY_AFTER_SECS',
        value: '-1',
      });
    });

    it('names SLUICE_NAMESPACE, not --namespace, for a bad namespace from the environment', () => {
      expect(errorOf([], { SLUICE_NAMESPACE: 'a.b' })).toMatchObject({
        flag: 'SLUICE_NAMESPACE',
        value: 'a.b',
      });
    });
  });
});
