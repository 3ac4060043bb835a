import { spawnSync } from 'node:child_process';
import { Proc, spawnProcess, SpawnOptions } from './process';
import { ProcessGroup } from './process-group';
import { acceptsConnections, quietPort, waitFor } from './wait';

/** The path of a command on PATH (or in /usr/sbin, where Debian puts some servers), or null. */
export function commandExists(cmd: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${cmd} || ls /usr/sbin/${cmd} 2>/dev/null`], {
    encoding: 'utf8',
  });
  const path = r.stdout.trim().split('\n')[0];
  return r.status === 0 && path ? path : null;
}

export interface NatsServerOptions extends SpawnOptions {
  /** Extra nats-server flags, e.g. `--user u --pass p` to require credentials. */
  args?: string[];
  /** Open the HTTP monitoring port (/varz, /connz) too. */
  monitor?: boolean;
  group?: ProcessGroup;
}

/**
 * A private `nats-server` on a free loopback port (`quietPort`), so a test can take NATS away
 * (SIGKILL: every client sees its connection cut at once) and bring it back on the same port, and
 * a benchmark can flood it and read its monitoring counters, without touching the machine's
 * shared server.
 */
export class NatsServer {
  private proc: Proc | undefined;
  private past = '';

  private constructor(
    private readonly bin: string,
    readonly port: number,
    readonly monitorPort: number | undefined,
    private readonly options: NatsServerOptions,
  ) {}

  /** Starts one; throws when nats-server is not installed (see `available()`). */
  static async start(options: NatsServerOptions = {}): Promise<NatsServer> {
    const bin = commandExists('nats-server');
    if (!bin) throw new Error('nats-server is not installed');
    const monitorPort = options.monitor ? await quietPort() : undefined;
    const server = new NatsServer(bin, await quietPort(), monitorPort, options);
    await server.restart();
    return server;
  }

  static available(): boolean {
    return commandExists('nats-server') !== null;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** The monitoring endpoint's base URL, with `monitor: true`. */
  get monitorUrl(): string {
    return `http://127.0.0.1:${this.monitorPort}`;
  }

  get running(): boolean {
    return this.proc?.running ?? false;
  }

  /** Everything every run of the server wrote. */
  get output(): string {
    return this.past + (this.proc?.output ?? '');
  }

  /** Starts the server (again) on its port and resolves once it accepts TCP connections. */
  async restart(): Promise<void> {
    if (this.running) return;
    this.past += this.proc?.output ?? '';
    const o = this.options;
    const args = ['-a', '127.0.0.1', '-p', String(this.port), ...(o.args ?? [])];
    if (this.monitorPort) args.push('-m', String(this.monitorPort));
    const spawnOptions = { name: 'nats-server', ...o };
    const proc = o.group
      ? o.group.exec('nats-server', this.bin, args, spawnOptions)
      : spawnProcess(this.bin, args, spawnOptions);
    this.proc = proc;
    // Its own "ready" line first: a port that accepts could be another process's.
    await waitFor(
      async () =>
        proc.running && proc.output.includes('Server is ready') && acceptsConnections(this.port),
      `nats-server on ${this.port}\n${this.output}`,
      10000,
      20,
    );
  }

  /** Freezes the server (SIGSTOP): sockets stay open but nothing answers, like a partition. */
  pause(): void {
    if (this.running) this.proc?.child.kill('SIGSTOP');
  }

  resume(): void {
    if (this.running) this.proc?.child.kill('SIGCONT');
  }

  /** Rereads its configuration file (`-c`), as `nats-server --signal reload` does: SIGHUP. */
  reload(): void {
    if (this.running) this.proc?.child.kill('SIGHUP');
  }

  /** Stops the server (SIGKILL by default: an outage, not a graceful shutdown). */
  async stop(sig: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.proc || !this.running) return;
    this.resume();
    await this.proc.stop(sig);
  }
}
