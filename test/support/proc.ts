import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Resident set size of a process in MiB, from /proc/<pid>/status (Linux). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!m) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
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
