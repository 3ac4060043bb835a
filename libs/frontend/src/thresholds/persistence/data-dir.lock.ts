import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

/** Lock files this process holds, to tell our own live lock from a dead process that had our pid. */
const heldHere = new Set<string>();

function pidIn(file: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite does not lock its data directory: two processes opening the same one silently diverge
 * and corrupt it. A pid file created with O_EXCL refuses the second opener; a file left by a
 * dead process is taken over.
 */
export class DataDirLock {
  private released = false;
  private readonly onExit = () => this.release();

  private constructor(private readonly file: string) {
    process.once('exit', this.onExit);
  }

  static acquire(dir: string, file: string): DataDirLock {
    mkdirSync(dir, { recursive: true });
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
        heldHere.add(file);
        return new DataDirLock(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const owner = pidIn(file);
      if (owner !== null && (owner === process.pid ? heldHere.has(file) : isAlive(owner))) {
        const who = owner === process.pid ? 'this process' : `process ${owner}`;
        throw new Error(`the embedded database in ${dir} is already open in ${who} (${file})`);
      }
      rmSync(file, { force: true });
    }
    throw new Error(`could not lock the embedded database in ${dir} (${file})`);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    process.removeListener('exit', this.onExit);
    heldHere.delete(this.file);
    rmSync(this.file, { force: true });
  }
}
