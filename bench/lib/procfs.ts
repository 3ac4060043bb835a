import { readdirSync, readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

/** Linux clock ticks per second for /proc times (USER_HZ, 100 on every mainstream kernel). */
const HZ = 100;

function statFields(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * The first `count` CPU times of a process's stat in ms, null when it is gone: fields 14 to 17
 * (utime, stime, then cutime and cstime: its children that exited and were waited for), at
 * indexes 11 to 14 after the name.
 */
function statCpuMs(pid: number, count: 2 | 4): number | null {
  const f = statFields(pid);
  return f ? (f.slice(11, 11 + count).reduce((a, x) => a + Number(x), 0) * 1000) / HZ : null;
}

/** User + system CPU time of a process in ms (0 when it is gone). */
export function cpuMs(pid: number): number {
  return statCpuMs(pid, 2) ?? 0;
}

/** Resident set size in MB (VmRSS), null when the process is gone. */
export function rssMb(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** The pid and every descendant of it (nginx workers, taskset children, …). */
export function descendants(root: number): number[] {
  return [...tree(root).keys()];
}

/** The pid and every descendant of it, each with its parent, parents first. */
function tree(root: number): Map<number, number> {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(Number(name));
    if (!f) continue;
    const ppid = Number(f[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(name));
    children.set(ppid, list);
  }
  const parents = new Map<number, number>([[root, 0]]);
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop() as number;
    for (const child of children.get(pid) ?? []) {
      parents.set(child, pid);
      todo.push(child);
    }
  }
  return parents;
}

/** Busy and total jiffies of the whole machine, or of one core, from /proc/stat. */
function machineJiffies(core?: number): { busy: number; total: number } {
  const name = core === undefined ? 'cpu ' : `cpu${core} `;
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  const line = lines.find((l) => l.startsWith(name));
  if (line === undefined) throw new Error(`/proc/stat has no ${name.trim()} line`);
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  const idle = v[3] + (v[4] ?? 0);
  return { busy: total - idle, total };
}

/**
 * Samples once a second how much CPU the machine spends outside the bench's own process tree
 * (in cores), so the report can say whether other work competed with the measurements.
 */
export class ForeignLoadMonitor {
  private timer: NodeJS.Timeout | undefined;
  private last = { machine: machineJiffies(), at: Date.now(), ours: oursMs() };
  private samples: Array<{ at: number; foreignCores: number }> = [];

  /** Samples from now on, against the state read when the monitor was made. */
  start(): void {
    this.timer = setInterval(() => this.sample(), 1000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Mean foreign load (cores) and its peak between two instants. */
  between(fromMs: number, toMs: number): { mean: number; max: number } {
    const xs = this.samples
      .filter((s) => s.at >= fromMs && s.at <= toMs)
      .map((s) => s.foreignCores);
    if (xs.length === 0) return { mean: 0, max: 0 };
    return { mean: xs.reduce((a, b) => a + b, 0) / xs.length, max: Math.max(...xs) };
  }

  private sample(): void {
    const machine = machineJiffies();
    const ours = oursMs();
    const at = Date.now();
    const wallMs = at - this.last.at;
    const busyMs = ((machine.busy - this.last.machine.busy) * 1000) / HZ;
    const foreign = Math.max(0, busyMs - Math.max(0, ours - this.last.ours)) / wallMs;
    this.samples.push({ at, foreignCores: foreign });
    this.last = { machine, at, ours };
  }
}

/**
 * All the CPU (ms) the bench's process tree has used so far, exited processes included: each
 * live process's own time plus that of its children that exited and were waited for. A process
 * that exits moves its time into its parent's count, so the total only grows, and a process that
 * lived between two samples (a short-lived tool) is counted too. Parents are read first; a
 * process gone by the time it is read was waited for after its parent's read, so the parent is
 * read again (the nearest ancestor still there), now holding its time.
 */
function oursMs(): number {
  const parents = tree(process.pid);
  const read = new Map<number, number>();
  for (const pid of parents.keys()) {
    let at = pid;
    let ms = statCpuMs(at, 4);
    while (ms === null && at !== process.pid) {
      at = parents.get(at) ?? process.pid;
      ms = statCpuMs(at, 4);
    }
    if (ms !== null) read.set(at, ms);
  }
  return [...read.values()].reduce((a, b) => a + b, 0);
}

/** Measures the CPU a process and its descendants use over an interval. */
export class CpuMeter {
  private readonly startCpu: number;
  private readonly startAt: number;

  constructor(private readonly pid: number) {
    this.startCpu = this.total();
    this.startAt = Date.now();
  }

  private total(): number {
    return descendants(this.pid).reduce((a, p) => a + cpuMs(p), 0);
  }

  /** Cores used since the start (1.0 = one core busy all the time). */
  read(): number {
    const wall = Date.now() - this.startAt;
    return wall > 0 ? (this.total() - this.startCpu) / wall : 0;
  }

  /** CPU ms used since the start. */
  usedMs(): number {
    return this.total() - this.startCpu;
  }
}

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  kernel: string;
}

export function machineInfo(): MachineInfo {
  let cpuModel = cpus()[0]?.model ?? 'unknown';
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) cpuModel = m[1].trim();
  } catch {
    // keep os.cpus()
  }
  let kernel = 'unknown';
  try {
    kernel = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
  } catch {
    // not Linux
  }
  return {
    cpuModel,
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kernel,
  };
}
