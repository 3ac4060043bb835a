import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { sleep } from '@sluice/testkit';

/** Resident set size of a process in MiB, from /proc/<pid>/status (Linux). */
export function rssMiB(pid: number): number {
  return statusMiB(pid, 'VmRSS');
}

/** A memory figure of /proc/<pid>/status in MiB: VmRSS now, or VmHWM, its peak. */
export function statusMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(status);
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

/** Sets a process's peak RSS (VmHWM) back to its RSS now, so the next peak is measured anew. */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/**
 * Waits until a process's memory is quiet, and returns how long that took: quiet when over a
 * whole `windowMs` its peak RSS stays within `slackMiB` of its RSS at the window's start.
 *
 * A memory bound measured on a frontend just started on an existing embedded database needs it:
 * in its first seconds of traffic V8 compiles the hottest functions of the database's
 * WebAssembly to optimised code in the background, and one of those compiles takes several
 * hundred MB of compiler memory for a few seconds before giving it back (docs/security.md). A
 * measurement that overlaps it is charged with it, whatever it measures.
 */
export async function memoryQuiet(
  pid: number,
  { windowMs = 3000, slackMiB = 8, timeoutMs = 120_000 } = {},
): Promise<number> {
  const start = Date.now();
  for (;;) {
    resetPeakRss(pid);
    const before = rssMiB(pid);
    await sleep(windowMs);
    if (statusMiB(pid, 'VmHWM') - before < slackMiB) return Date.now() - start;
    if (Date.now() - start > timeoutMs) {
      throw new Error(`memory of process ${pid} still moving after ${timeoutMs} ms`);
    }
  }
}

/** Open file descriptors of a process: all of them, and how many are sockets. */
export function openFds(pid: number): { total: number; sockets: number } {
  let sockets = 0;
  const fds = readdirSync(`/proc/${pid}/fd`);
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) sockets++;
    } catch {
      // closed between readdir and readlink
    }
  }
  return { total: fds.length, sockets };
}
