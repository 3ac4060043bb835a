import { join } from 'node:path';
import { Proc, ProcessGroup, SpawnOptions } from '@sluice/testkit';
import { ForeignLoadMonitor } from './procfs';

/** Where the servers under test and the load generators run (see docs/benchmarks.md). */
export const CPU = { server: '0', client: '1' } as const;

/** A compiled script of the bench (`tools/fixed-rate.js`), wherever the bench was built to. */
export const benchScript = (path: string): string => join(__dirname, '..', path);

export interface BenchContext {
  readonly quick: boolean;
  /** Shared NATS for the scenarios that need no private server. */
  readonly natsUrl: string;
  /** PostgreSQL URL of the bench's own database (created and dropped by the bench). */
  readonly databaseUrl: string;
  readonly tmpDir: string;
  /** Node flags of every server the bench starts (`--node-flags`); none by default. */
  readonly nodeFlags: readonly string[];
  readonly foreign: ForeignLoadMonitor;
  log(message: string): void;
  /** A process group for one scenario, stopped by it at the end. */
  group(): BenchGroup;
}

/**
 * A process group whose servers all run with the same Node flags: Sluice's apps (`app`) and the
 * bench's own servers (`server`: bare Fastify, the engine farm). Load generators and tools
 * (`node`) keep Node's defaults, the same for every side they load.
 */
export class BenchGroup extends ProcessGroup {
  constructor(
    logDir: string,
    private readonly nodeFlags: readonly string[],
  ) {
    super(logDir);
  }

  override app(app: string, args: string[], options: SpawnOptions = {}): Proc {
    return super.app(app, args, this.withFlags(options));
  }

  /** A server of the bench's own, `script` relative to the bench's build (`servers/x.js`). */
  server(name: string, script: string, args: string[], options: SpawnOptions = {}): Proc {
    return this.node(name, benchScript(script), args, this.withFlags(options));
  }

  /** A tool of the bench (a load generator), on the client core, answering JSON on stdout. */
  tool(script: string, args: string[], options: SpawnOptions = {}): Proc {
    const name = script.replace(/^.*\//, '').replace(/\.js$/, '');
    return this.node(name, benchScript(script), args, {
      cpu: CPU.client,
      captureStdout: true,
      ...options,
    });
  }

  private withFlags(o: SpawnOptions): SpawnOptions {
    return { ...o, nodeArgs: [...this.nodeFlags, ...(o.nodeArgs ?? [])] };
  }
}

/** Runs a tool to its end and parses the JSON line it printed; throws with its output if it failed. */
export async function runTool<T>(g: BenchGroup, script: string, args: string[]): Promise<T> {
  const proc = g.tool(script, args);
  const code = await proc.exited;
  if (code !== 0) throw new Error(`${script} exited ${code}: ${proc.output.slice(-1500)}`);
  return JSON.parse(proc.stdout) as T;
}
