import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, WriteStream } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..', '..');
export const DIST = join(ROOT, 'dist');

const TAIL_CHARS = 64 * 1024;

export interface SpawnOptions {
  /** CPU list for `taskset -c` (e.g. "0"); unset = not pinned. */
  cpu?: string;
  env?: NodeJS.ProcessEnv;
  /** Extra flags for node itself (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** Another Node binary to run a script on (default: the bench's own, the runtime of record). */
  node?: string;
  /** Keep stdout apart from the log (tools that answer in JSON on stdout). */
  captureStdout?: boolean;
  /** Give the child a stdin pipe (tools driven by commands). */
  stdin?: boolean;
}

let tasksetAvailable: boolean | undefined;
export function hasTaskset(): boolean {
  tasksetAvailable ??= spawnSync('taskset', ['-V']).status === 0;
  return tasksetAvailable;
}

/** Pins every thread of a running process to `cpu` (no-op without taskset). */
export function pin(pid: number, cpu: string): void {
  if (hasTaskset()) spawnSync('taskset', ['-a', '-pc', cpu, String(pid)], { stdio: 'ignore' });
}

/** One child process started by the bench; its output goes to a log file and a short tail. */
export class Proc {
  tail = '';
  stdout = '';
  readonly exited: Promise<number | null>;
  private readonly log: WriteStream;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    logFile: string,
    captureStdout: boolean,
  ) {
    this.log = createWriteStream(logFile, { flags: 'a' });
    const keep = (d: Buffer): void => {
      this.log.write(d);
      this.tail = (this.tail + d.toString()).slice(-TAIL_CHARS);
    };
    child.stdout?.on('data', (d: Buffer) => {
      if (captureStdout) this.stdout += d.toString();
      else keep(d);
    });
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.log.end();
        resolve(code ?? (signal ? -1 : null));
      }),
    );
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async waitForOutput(pattern: RegExp, timeoutMs = 20000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.tail)) {
      if (!this.running) throw new Error(`${this.name} exited early:\n${this.tail.slice(-2000)}`);
      if (Date.now() > deadline) {
        throw new Error(
          `${this.name}: no ${pattern} after ${timeoutMs} ms:\n${this.tail.slice(-2000)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 5000): Promise<number | null> {
    if (this.running) this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}

/** Every process still running, whichever group started it: killed when the bench exits. */
const ALL = new Set<Proc>();
let exitHookInstalled = false;

function killAllNow(): void {
  for (const p of ALL) {
    try {
      p.child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * The processes of one scenario: each is stopped when the scenario ends, and, whatever happens
 * (failure, Ctrl-C, an exception), none outlives the bench.
 */
export class ProcessGroup {
  private readonly live = new Set<Proc>();
  private static counter = 0;

  constructor(readonly logDir: string) {
    if (!exitHookInstalled) {
      process.once('exit', killAllNow);
      exitHookInstalled = true;
    }
  }

  /** A Node script, with its path relative to the repository root. */
  node(name: string, script: string, args: string[], options: SpawnOptions = {}): Proc {
    const path = join(ROOT, script);
    if (!existsSync(path)) throw new Error(`${path} not found: run \`npm run build\` first`);
    const node = options.node ?? process.execPath;
    return this.exec(name, node, [...(options.nodeArgs ?? []), path, ...args], options);
  }

  exec(name: string, command: string, args: string[], options: SpawnOptions = {}): Proc {
    const [cmd, argv] =
      options.cpu !== undefined && hasTaskset()
        ? ['taskset', ['-c', options.cpu, command, ...args]]
        : [command, args];
    const child = spawn(cmd, argv, {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    const n = String(++ProcessGroup.counter).padStart(3, '0');
    const proc = new Proc(
      name,
      child,
      join(this.logDir, `${n}-${name}.log`),
      options.captureStdout === true,
    );
    this.live.add(proc);
    ALL.add(proc);
    void proc.exited.then(() => {
      this.live.delete(proc);
      ALL.delete(proc);
    });
    return proc;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.live].map((p) => p.stop()));
  }
}

/** Pids of every process the bench runs right now (for telling our CPU use from others'). */
export function benchPids(): number[] {
  return [process.pid, ...[...ALL].map((p) => p.pid)];
}

/** Stops everything still running (Ctrl-C, fatal error). */
export async function stopEverything(): Promise<void> {
  await Promise.all([...ALL].map((p) => p.stop('SIGTERM', 3000)));
}
