import { CPU } from './context';
import { Proc, ProcessGroup } from '@sluice/testkit';
import { waitFor } from './util';

export { FLOOD_MODEL, SENTINEL_MODEL, SENTINEL_WORKER } from './flood-names';

export interface FloodDone {
  event: 'flood-done';
  sent: number;
  startMs: number;
  endMs: number;
  sentinelMs: number;
  behindMax: number;
}

/** Drives bench/tools/report-flood over its stdin. */
export class Flood {
  private seen = 0;

  private constructor(private readonly proc: Proc) {}

  static async start(
    group: ProcessGroup,
    o: {
      natsUrl: string;
      namespace: string;
      endpoint: string;
      workers: number;
      ranks: number;
      connections: number;
      mode: 'busy' | 'mixed';
    },
  ): Promise<Flood> {
    const args = [
      o.natsUrl,
      o.namespace,
      o.endpoint,
      o.workers,
      o.ranks,
      o.connections,
      o.mode,
    ].map(String);
    const proc = group.node('report-flood', 'dist/bench/tools/report-flood.js', args, {
      cpu: CPU.client,
      captureStdout: true,
      stdin: true,
    });
    const f = new Flood(proc);
    await f.next('ready', 30000);
    return f;
  }

  send(cmd: object): void {
    this.proc.child.stdin?.write(`${JSON.stringify(cmd)}\n`);
  }

  /** The next event of that name on stdout (events are consumed in order). */
  async next<T extends { event: string }>(event: string, timeoutMs = 120000): Promise<T> {
    return waitFor(
      () => {
        const lines = this.proc.stdout.split('\n').filter(Boolean);
        for (let i = this.seen; i < lines.length; i++) {
          const e = JSON.parse(lines[i]) as T;
          if (e.event === event) {
            this.seen = i + 1;
            return e;
          }
        }
        if (!this.proc.running)
          throw new Error(`report-flood exited: ${this.proc.output.slice(-1000)}`);
        return undefined;
      },
      `report-flood event ${event}`,
      timeoutMs,
      5,
    );
  }

  async quit(): Promise<void> {
    this.send({ cmd: 'quit' });
    await Promise.race([this.proc.exited, new Promise((r) => setTimeout(r, 3000))]);
  }
}
