import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { spawnProcess } from '@sluice/testkit';
import { useProcesses } from './support/fixtures';
import { spawnApp, startEmbedded, storeDataDir } from './support/processes';

const LOCK_MODULE = join(
  __dirname,
  '..',
  'dist',
  'libs',
  'frontend',
  'src',
  'thresholds',
  'persistence',
  'data-dir.lock.js',
);

/**
 * A process that loads the lock module, says `ready`, reads the instant to try at from its
 * standard input, busy-waits for it (so that two such processes try within microseconds of each
 * other), reports, and holds what it got until its standard input closes.
 */
const CONTENDER = `
const { DataDirLock } = require(process.argv[1]);
const [dir, file] = process.argv.slice(2);
process.stdout.write('ready\\n');
process.stdin.once('data', (at) => {
  while (Date.now() < Number(String(at))) {}
  try {
    DataDirLock.acquire(dir, file);
    process.stdout.write('acquired\\n');
  } catch (err) {
    process.stdout.write('refused: ' + err.message + '\\n');
  }
  process.stdin.once('end', () => process.exit(0));
});`;

interface Contender {
  ready: Promise<void>;
  outcome: Promise<string>;
  go(at: number): void;
  done(): Promise<void>;
}

function contender(dir: string, file: string): Contender {
  // Through the testkit: a contender a failed test leaves running is stopped after the file.
  const proc = spawnProcess(process.execPath, ['-e', CONTENDER, LOCK_MODULE, dir, file], {
    name: 'contender',
    stdin: true,
  });
  const child = proc.child as typeof proc.child & { stdin: Writable; stdout: Readable };
  let out = '';
  const seen = (what: RegExp): Promise<string> =>
    new Promise((resolve) => {
      const check = (): void => {
        const m = what.exec(out);
        if (m) resolve(m[0]);
        else child.stdout.once('data', (d: Buffer) => ((out += d.toString()), check()));
      };
      check();
    });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    ready: seen(/ready\n/).then(() => undefined),
    outcome: seen(/(acquired|refused: .*)\n/).then((line) => line.trim()),
    go: (at) => child.stdin.write(String(at)),
    done: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

/**
 * Issue 11, item 10: the embedded database's lock left by a dead process is taken over by exactly
 * one of two processes that start together (before, both could remove the stale lock in turn and
 * both "hold" it, which corrupts a PGlite data directory).
 */
describe('embedded database lock: takeover from a dead process', () => {
  it('leaves exactly one owner when two processes start at once, round after round', async () => {
    const rounds = 20;
    const owners: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-lock-'));
      const file = join(dir, 'sluice.lock');
      const dead = spawnSync(process.execPath, ['-e', '0']); // a pid that no longer runs
      writeFileSync(file, `${dead.pid}\n`);
      const pair = [contender(dir, file), contender(dir, file)];
      await Promise.all(pair.map((c) => c.ready));
      const at = Date.now() + 50;
      for (const c of pair) c.go(at);
      const outs = await Promise.all(pair.map((c) => c.outcome));
      await Promise.all(pair.map((c) => c.done()));
      owners.push(outs.filter((o) => o === 'acquired').length);
      for (const o of outs) expect(o).toMatch(/^(acquired|refused: .*already open in process \d+)/);
    }
    expect(owners).toEqual(new Array<number>(rounds).fill(1));
  });
});

/**
 * Issue 41 item 12c: a second embedded process on a data directory a live process holds waited
 * forever without listening. After `--data-dir-wait-ms` it exits 1 naming the holder's pid.
 */
describe('embedded database lock: held by a live process', () => {
  const group = useProcesses();

  it('exits 1 after --data-dir-wait-ms, naming the process that holds the lock', async () => {
    const dir = storeDataDir();
    const first = await startEmbedded({ group, flags: ['--data-dir', dir] });
    const second = spawnApp('embedded', [
      ...['--http-host', '127.0.0.1', '--http-port', '0'],
      ...['--data-dir', dir, '--data-dir-wait-ms', '1000'],
    ]);
    try {
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        second.exited,
        new Promise<'still running'>((r) => (timer = setTimeout(() => r('still running'), 60_000))),
      ]);
      clearTimeout(timer);
      expect(code).toBe(1);
      expect(second.output).toContain(`process ${first.proc.pid}`);
      expect(second.output).toContain('--data-dir-wait-ms');
      expect(second.output).not.toMatch(/sluice: ready at/);
    } finally {
      if (second.running) await second.stop('SIGKILL');
    }
    // The holder is untouched and still serves.
    expect((await fetch(`${first.url}/live`)).status).toBe(200);
  }, 120_000);
});
