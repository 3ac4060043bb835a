import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, WriteStream } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { sleep } from './wait';

/**
 * The repository root: the nearest folder above this file with a package.json. Found rather
 * than counted, because this file runs from `libs/` under jest and from `dist/libs/` in the bench.
 */
export const ROOT = ((): string => {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();

/** How a child process is started and what is kept of its output. */
export interface SpawnOptions {
  /** Shown in errors and log file names. */
  name?: string;
  /** CPU list for `taskset -c` (e.g. "0"); unset, or no taskset on the machine: not pinned. */
  cpu?: string;
  env?: NodeJS.ProcessEnv;
  /** Flags for node itself (e.g. `--cpu-prof`), for Node scripts. */
  nodeArgs?: string[];
  /** Another Node binary to run a script on (default: the one running this process). */
  node?: string;
  /** Also append everything the process writes to this file. */
  logFile?: string;
  /** Keep only the last this many characters of output in memory (a long bench run). */
  tailChars?: number;
  /** Keep stdout apart from `output`, in `stdout` (tools that answer in JSON on stdout). */
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

/** Every child still running, whoever started it: killed when this process exits. */
const LIVE = new Set<Proc>();
let exitHookInstalled = false;

/** A child process with its output captured; `exited` resolves with its exit code. */
export class Proc {
  /** stdout and stderr as written (only stderr with `captureStdout`), possibly only the tail. */
  output = '';
  /** stdout, with `captureStdout`. */
  stdout = '';
  readonly exited: Promise<number | null>;
  /** `stop()` was called: an exit after it was asked for. */
  stopRequested = false;
  private readonly log: WriteStream | undefined;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    options: SpawnOptions = {},
  ) {
    this.log = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : undefined;
    const max = options.tailChars ?? Infinity;
    const keep = (d: Buffer): void => {
      this.log?.write(d);
      this.output += d.toString();
      if (this.output.length > max) this.output = this.output.slice(-max);
    };
    child.stdout?.on('data', (d: Buffer) => {
      if (options.captureStdout) this.stdout += d.toString();
      else keep(d);
    });
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        this.log?.end();
        LIVE.delete(this);
        resolve(code);
      }),
    );
    LIVE.add(this);
    if (!exitHookInstalled) {
      process.once('exit', () => LIVE.forEach((p) => p.signal('SIGKILL')));
      exitHookInstalled = true;
    }
  }

  /**
   * Signals the child's whole process group (it leads one: spawned detached), so what it started
   * (`taskset`'s program, the embedded app's workers, a shell's commands) goes with it.
   */
  private signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone (or was never made): the child alone, if it still runs.
      this.child.kill(signal);
    }
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Waits for `pattern` in the output; fails at once if the process exits first. */
  async waitForOutput(pattern: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = pattern.exec(this.output);
      if (found) return found;
      if (!this.running) throw new Error(`${this.name} exited early:\n${this.output.slice(-2000)}`);
      if (Date.now() > deadline) {
        throw new Error(`${this.name}: no ${pattern} after ${timeoutMs} ms:\n${this.output}`);
      }
      await sleep(25);
    }
  }

  /**
   * Sends `signal` at once, with no wait and no grace period (a test's fault). A process killed
   * this way or through `stop()` counts as stopped on purpose (`stopRequested`).
   */
  kill(signal: NodeJS.Signals): void {
    if (signal !== 'SIGSTOP' && signal !== 'SIGCONT') this.stopRequested = true;
    this.signal(signal);
  }

  /** Signals the process (SIGTERM by default), SIGKILLs it after `graceMs`, returns its code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 5000): Promise<number | null> {
    this.stopRequested = true;
    if (this.running) {
      this.signal(signal);
      // A process a test froze (SIGSTOP) acts on the signal only once it runs again.
      this.signal('SIGCONT');
    }
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    const code = await this.exited;
    clearTimeout(timer);
    // Whatever the child started and left behind goes too.
    this.signal('SIGKILL');
    return code;
  }
}

/** Stops every child still running (Ctrl-C, a fatal error). */
export async function stopEverything(graceMs = 3000): Promise<void> {
  await Promise.all([...LIVE].map((p) => p.stop('SIGTERM', graceMs)));
}

/** Starts `command` from the repository root, pinned with taskset when `cpu` is given. */
export function spawnProcess(command: string, args: string[], options: SpawnOptions = {}): Proc {
  const [cmd, argv] =
    options.cpu !== undefined && hasTaskset()
      ? ['taskset', ['-c', options.cpu, command, ...args]]
      : [command, args];
  const child = spawn(cmd, argv, {
    // Its own process group: stopping it stops everything it started (Proc.signal).
    detached: true,
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  return new Proc(options.name ?? command, child, options);
}

/**
 * Runs a Node script (a path relative to the repository root, or absolute) with the Node that
 * runs us, whichever that is.
 */
export function spawnNode(script: string, args: string[], options: SpawnOptions = {}): Proc {
  const path = isAbsolute(script) ? script : join(ROOT, script);
  if (!existsSync(path)) throw new Error(`${path} not found: run \`npm run build\` first`);
  const nodeArgs = options.nodeArgs ?? [];
  return spawnProcess(options.node ?? process.execPath, [...nodeArgs, path, ...args], {
    name: script,
    ...options,
  });
}

/** Runs a built app, `dist/apps/<app>/main.js`. */
export function spawnApp(app: string, args: string[], options: SpawnOptions = {}): Proc {
  return spawnNode(join('dist', 'apps', app, 'main.js'), args, { name: app, ...options });
}
