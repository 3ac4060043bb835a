import { spawnApp } from './support/processes';

/** docs/configuration.md: an invalid value for any flag exits with code 2 and names the flag and value. */
describe('frontend flag validation', () => {
  const cases: string[][] = [
    ['--admission-control', 'maybe'],
    ['--active-decode-blocks-threshold', '1.5'],
    ['--active-decode-blocks-threshold', '-0.1'],
    ['--active-prefill-tokens-threshold', '2.5'],
    ['--active-prefill-tokens-threshold', '-3'],
    ['--active-prefill-tokens-threshold-frac', 'Infinity'],
    ['--router-mode', 'fastest'],
    ['--router-queue-threshold', 'abc'],
    ['--router-queue-max-depth', '1.5'],
    ['--retry-after-secs', '-1'],
    ['--worker-ttl-ms', '0'],
    ['--http-port', '70000'],
    ['--nats-url', 'http://x'],
    ['--namespace', 'a.b'],
    ['--priority-header', 'x tier'],
    ['--priority-factor', 'sheddable=1.5'],
    ['--priority-factor', 'standard=1'],
    ['--priority-factor', 'critical=0.5,sheddable=0.5'],
  ];

  it.each(cases)(
    'rejects %s %s with exit code 2, naming the flag and the value',
    async (flag, value) => {
      const proc = spawnApp('frontend', [flag, value]);
      expect(await proc.exited).toBe(2);
      const firstLine = proc.output.split('\n')[0];
      expect(firstLine).toContain(flag);
      expect(firstLine).toContain(`'${value}'`);
      expect(proc.output).toMatch(/usage:/);
    },
  );

  it('rejects an unknown flag with exit code 2, naming it', async () => {
    const proc = spawnApp('frontend', ['--no-such-flag', '1']);
    expect(await proc.exited).toBe(2);
    expect(proc.output.split('\n')[0]).toBe('sluice-frontend: unknown flag --no-such-flag');
  });

  it('reads the same flags from SLUICE_* environment variables', async () => {
    const proc = spawnApp('frontend', [], { env: { SLUICE_ROUTER_MODE: 'sideways' } });
    expect(await proc.exited).toBe(2);
    expect(proc.output).toContain('SLUICE_ROUTER_MODE');
    expect(proc.output).toContain("'sideways'");
  });

  it('reads SLUICE_PRIORITY_FACTOR like the flag (comma-separated), naming the variable', async () => {
    const proc = spawnApp('frontend', [], { env: { SLUICE_PRIORITY_FACTOR: 'critical=0.9' } });
    expect(await proc.exited).toBe(2);
    expect(proc.output).toContain('SLUICE_PRIORITY_FACTOR');
    expect(proc.output).toContain("'critical=0.9'");
  });

  it('validates worker flags the same way', async () => {
    const proc = spawnApp('worker', ['--kv-total-blocks', 'lots']);
    expect(await proc.exited).toBe(2);
    expect(proc.output).toContain('--kv-total-blocks');
    expect(proc.output).toContain("'lots'");
  });

  it('validates flags given to npm start (the embedded system)', async () => {
    const proc = spawnApp('embedded', ['--admission-control', 'sometimes']);
    expect(await proc.exited).toBe(2);
    expect(proc.output).toContain('--admission-control');
  });
});
