import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
 * A process that takes the embedded database's lock at a given instant (busy-waiting for it, so
 * that two such processes try within microseconds of each other), holds it, then exits.
 */
const CONTENDER = `
const { DataDirLock } = require(process.argv[1]);
const [dir, file, at] = process.argv.slice(2);
while (Date.now() < Number(at)) {}
try {
  DataDirLock.acquire(dir, file);
  process.stdout.write('acquired\\n');
  setTimeout(() => process.exit(0), 3000);
} catch (err) {
  process.stdout.write('refused: ' + err.message + '\\n');
}`;

function contend(dir: string, file: string, at: number): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', CONTENDER, LOCK_MODULE, dir, file, String(at)]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', () => resolve(out.trim()));
  });
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
      const at = Date.now() + 1500;
      const outs = await Promise.all([contend(dir, file, at), contend(dir, file, at)]);
      owners.push(outs.filter((o) => o === 'acquired').length);
      for (const o of outs) expect(o).toMatch(/^(acquired|refused: .*already open in process \d+)/);
    }
    expect(owners).toEqual(new Array<number>(rounds).fill(1));
  }, 180_000);
});
