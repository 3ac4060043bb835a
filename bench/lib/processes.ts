import { readFileSync, readlinkSync } from 'node:fs';
import { basename, relative } from 'node:path';
import { ROOT } from '@sluice/testkit';

/** A process the bench compares, as `/proc` shows it while it runs. */
export interface ProcessInfo {
  readonly role: string;
  /** The binary: `node v24.22.3` for the Node running the bench, else its path or name. */
  readonly program: string;
  /** Node's own flags from its command line (before the script); `''` for none. */
  readonly nodeFlags: string;
  /** `NODE_OPTIONS` in its environment; `''` for none. */
  readonly nodeOptions: string;
  /** The CPUs it may run on (`Cpus_allowed_list`). */
  readonly cpus: string;
  readonly isNode: boolean;
}

const read = (pid: number, file: string): string => readFileSync(`/proc/${pid}/${file}`, 'utf8');

/** Reads a running process's binary, Node flags, `NODE_OPTIONS` and CPU affinity. */
export function describeProcess(role: string, pid: number): ProcessInfo {
  const exe = readlinkSync(`/proc/${pid}/exe`);
  const argv = read(pid, 'cmdline').split('\0').filter(Boolean);
  const env = read(pid, 'environ').split('\0');
  const isNode = exe === process.execPath || basename(exe) === 'node';
  const script = argv.findIndex((a, i) => i > 0 && !a.startsWith('-'));
  return {
    role,
    program:
      exe === process.execPath
        ? `node ${process.version}`
        : relative(ROOT, exe).startsWith('..')
          ? exe
          : relative(ROOT, exe),
    nodeFlags: isNode ? argv.slice(1, script === -1 ? undefined : script).join(' ') : '',
    nodeOptions: (env.find((e) => e.startsWith('NODE_OPTIONS=')) ?? '').slice(13),
    cpus: /^Cpus_allowed_list:\s*(\S+)/m.exec(read(pid, 'status'))?.[1] ?? '?',
    isNode,
  };
}

/**
 * Throws unless the processes of one comparison run alike: the same CPUs, and for the Node ones
 * the same binary, flags and `NODE_OPTIONS`. A ratio of unlike processes is not reported.
 */
export function requireLikeForLike(sides: readonly ProcessInfo[]): void {
  const differ = (key: keyof ProcessInfo, of: readonly ProcessInfo[]): boolean =>
    new Set(of.map((p) => p[key])).size > 1;
  const node = sides.filter((p) => p.isNode);
  const bad = [
    differ('cpus', sides) && 'CPUs',
    differ('program', node) && 'Node binary',
    differ('nodeFlags', node) && 'Node flags',
    differ('nodeOptions', node) && 'NODE_OPTIONS',
  ].filter(Boolean);
  if (bad.length > 0) {
    const list = sides.map((p) => `${p.role}: ${JSON.stringify(p)}`).join('; ');
    throw new Error(`not like for like (${bad.join(', ')} differ): ${list}`);
  }
}
