import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnApp } from './support/processes';

/**
 * Issue 41 item 6: a refused URL is echoed without its user-info. Each real app is started with
 * a bad value that carries a password, from a flag, a variable or a file; it must exit 2 naming
 * what it refused, and the password must appear nowhere in what it printed.
 */
const PASSWORD = 'pw-s3cr3t-41';
const BAD_NATS = `nats://user:${PASSWORD}@host:99999`;
const BAD_HTTP = `http://u:${PASSWORD}@host:99999`;

interface Case {
  app: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** What the first line of the error names. */
  names: string;
}

describe('flag errors never print the credentials of a URL', () => {
  let dir: string;
  let targetsFile: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-secrets-'));
    targetsFile = join(dir, 'targets.txt');
    writeFileSync(targetsFile, `ok=http://127.0.0.1:1\nbad=${BAD_HTTP}\n`);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const bridge = ['--engine', 'vllm'];
  const nats = ['--nats-url', 'nats://127.0.0.1:4222'];
  const commaList = { SLUICE_NATS_URL: `nats://127.0.0.1:4222,${BAD_NATS}` };
  const cases: Case[] = [
    { app: 'frontend', args: ['--nats-url', BAD_NATS], names: '--nats-url' },
    { app: 'frontend', args: [], env: commaList, names: 'SLUICE_NATS_URL' },
    { app: 'frontend', args: ['--engine-target', `vllm=a=${BAD_HTTP}`], names: '--engine-target' },
    { app: 'embedded', args: ['--nats-url', BAD_NATS], names: '--nats-url' },
    { app: 'embedded', args: [], env: commaList, names: 'SLUICE_NATS_URL' },
    { app: 'embedded', args: ['--engine-target', `vllm=${BAD_HTTP}`], names: '--engine-target' },
    { app: 'worker', args: ['--nats-url', BAD_NATS], names: '--nats-url' },
    {
      app: 'bridge',
      args: [...bridge, '--target', 'http://127.0.0.1:1', '--nats-url', BAD_NATS],
      names: '--nats-url',
    },
    {
      app: 'bridge',
      args: [...bridge, '--target', 'http://127.0.0.1:1'],
      env: commaList,
      names: 'SLUICE_NATS_URL',
    },
    { app: 'bridge', args: [...bridge, ...nats, '--target', `a=${BAD_HTTP}`], names: '--target' },
    {
      app: 'bridge',
      args: [...bridge, ...nats, '--targets-file', 'FILE'],
      names: '--targets-file',
    },
    { app: 'loadgen', args: ['--url', BAD_HTTP], names: '--url' },
  ];

  it.each(cases.map((c) => [`${c.app} ${c.names}`, c] as const))(
    '%s: exit 2, names it, hides the password',
    async (_, c) => {
      const args = c.args.map((a) => (a === 'FILE' ? targetsFile : a));
      const proc = spawnApp(c.app, args, { env: { SLUICE_NATS_URL: '', ...c.env } });
      expect(await proc.exited).toBe(2);
      expect(proc.output.split('\n')[0]).toContain(c.names);
      // The URL is still shown, so the user sees which one: only its user-info is replaced.
      expect(proc.output).toContain('***@host:99999');
      expect(proc.output).not.toContain(PASSWORD);
    },
  );
});
