import { linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';

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

/** The data directory is open in a live process: `pid` holds its lock. */
export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly file: string,
    readonly pid: number,
  ) {
    const who = pid === process.pid ? 'this process' : `process ${pid}`;
    super(`the embedded database in ${dir} is already open in ${who} (${file})`);
    this.name = 'DataDirLockedError';
  }
}

/** How long a starter waits for another one that is taking over a stale lock. */
const TAKEOVER_WAIT_MS = 2000;
const RETRY_MS = 10;
/** A takeover guard older than this was left by a process that died during its takeover. */
const GUARD_STALE_MS = 5000;

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Creates `file` holding our pid, or returns false when it exists. Written to a temporary file
 * and linked into place, so the lock file never exists without its pid: a reader can never take
 * a half-written lock for a stale one.
 */
function createWithPid(file: string): boolean {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${process.pid}\n`);
  try {
    linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * Removes the lock of a dead process — under a guard file, so that of two processes starting
 * together only one removes it, and none removes the fresh lock the other just created. Returns
 * false when another process is taking over right now (the caller retries).
 */
function removeStale(file: string, staleOwner: number | null): boolean {
  const guard = `${file}.takeover`;
  try {
    writeFileSync(guard, `${process.pid}\n`, { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const age = Date.now() - (statSync(guard, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > GUARD_STALE_MS) rmSync(guard, { force: true });
    return false;
  }
  try {
    if (pidIn(file) === staleOwner) rmSync(file, { force: true });
    return true;
  } finally {
    rmSync(guard, { force: true });
  }
}

/**
 * PGlite does not lock its data directory: two processes opening the same one silently diverge
 * and corrupt it. A pid file created atomically refuses the second opener; a file left by a
 * dead process is taken over, by one process only even when several start at once.
 */
export class DataDirLock {
  private released = false;
  private readonly onExit = () => this.release();

  private constructor(private readonly file: string) {
    process.once('exit', this.onExit);
  }

  static acquire(dir: string, file: string): DataDirLock {
    mkdirSync(dir, { recursive: true });
    const deadline = Date.now() + TAKEOVER_WAIT_MS;
    do {
      if (createWithPid(file)) {
        heldHere.add(file);
        return new DataDirLock(file);
      }
      const owner = pidIn(file);
      if (owner !== null && (owner === process.pid ? heldHere.has(file) : isAlive(owner))) {
        throw new DataDirLockedError(dir, file, owner);
      }
      if (!removeStale(file, owner)) sleep(RETRY_MS);
    } while (Date.now() < deadline);
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
