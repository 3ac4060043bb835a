import { join } from 'node:path';
import { Proc, spawnApp, spawnNode, spawnProcess, SpawnOptions } from './process';

/** How much output a process of a logged group keeps in memory (the rest is in its log file). */
const TAIL_CHARS = 64 * 1024;

/**
 * The processes of one test file or one bench scenario: `stopAll()` stops whichever are still
 * running. With a `logDir`, each writes its output to a numbered log file there and keeps only
 * a tail in memory, for long runs.
 */
export class ProcessGroup {
  private readonly live = new Set<Proc>();
  private static counter = 0;

  constructor(readonly logDir?: string) {}

  /** A process started elsewhere, stopped with the group. */
  add<P extends Proc>(proc: P): P {
    this.live.add(proc);
    void proc.exited.then(() => this.live.delete(proc));
    return proc;
  }

  exec(name: string, command: string, args: string[], options: SpawnOptions = {}): Proc {
    return this.add(spawnProcess(command, args, this.options(name, options)));
  }

  /** A Node script, with its path relative to the repository root. */
  node(name: string, script: string, args: string[], options: SpawnOptions = {}): Proc {
    return this.add(spawnNode(script, args, this.options(name, options)));
  }

  /** A built app, `dist/apps/<app>/main.js`. */
  app(app: string, args: string[], options: SpawnOptions = {}): Proc {
    return this.add(spawnApp(app, args, this.options(options.name ?? app, options)));
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.live].map((p) => p.stop()));
  }

  private options(name: string, options: SpawnOptions): SpawnOptions {
    if (!this.logDir) return { ...options, name };
    const n = String(++ProcessGroup.counter).padStart(3, '0');
    return {
      tailChars: TAIL_CHARS,
      logFile: join(this.logDir, `${n}-${name}.log`),
      ...options,
      name,
    };
  }
}
