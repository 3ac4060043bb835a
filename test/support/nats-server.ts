import { ChildProcess, spawn } from 'node:child_process';
import { connect as tcpConnect } from 'node:net';
import { connect, NatsConnection } from 'nats';
import { kvReport, MODEL, ReportFields } from '@sluice/testkit';
import { chat } from './http';
import { freePort, waitFor } from './processes';

/**
 * A private `nats-server` child process on a free loopback port, so a test can take NATS away
 * (SIGKILL: every client sees its connection cut at once) and bring it back on the same port,
 * without touching the machine's shared server on 4222.
 */
export class NatsServer {
  output = '';
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly args: string[],
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && !this.child.signalCode;
  }

  /** `args`: extra nats-server flags, e.g. `--user u --pass p` to require credentials. */
  static async start(args: string[] = []): Promise<NatsServer> {
    const server = new NatsServer(await freePort(), args);
    await server.restart();
    return server;
  }

  /** Starts the server (again) on its port and resolves once it accepts TCP connections. */
  async restart(): Promise<void> {
    if (this.running) return;
    const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(this.port), ...this.args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
    this.child = child;
    await waitFor(
      () => this.running && accepts(this.port),
      `nats-server on ${this.port}\n${this.output}`,
      10000,
      20,
    );
  }

  /** Freezes the server (SIGSTOP): sockets stay open but nothing answers, like a partition. */
  pause(): void {
    if (this.child) signal(this.child, 'SIGSTOP');
  }

  resume(): void {
    if (this.child) signal(this.child, 'SIGCONT');
  }

  /** Stops the server (SIGKILL by default: an outage, not a graceful shutdown). */
  async stop(sig: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    this.resume();
    child.kill(sig);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Signals a child that is still running (a stopped child still counts as running). */
function signal(child: ChildProcess, sig: NodeJS.Signals): void {
  if (child.exitCode === null && child.signalCode === null) child.kill(sig);
}

/** Reads the frontend's `/health` as an operator would: status code and JSON body. */
export async function health(base: string): Promise<{ status: number; body: HealthBody }> {
  const res = await fetch(`${base}/health`);
  return { status: res.status, body: (await res.json()) as HealthBody };
}

type Indicators = Record<string, { status: string; state?: string; message?: string }>;

/**
 * 200: terminus' report (`status`, `info`, `error`, `details`); 503: the contract's error body
 * (`message`, `type`, `code`) with that report as `details`.
 */
export interface HealthBody {
  status?: string;
  message?: string;
  type?: string;
  details: Indicators & { info?: Indicators; error?: Indicators };
}

/**
 * Publishes contract §4 reports for test-controlled workers every `everyMs` on its own NATS
 * connection (which does not reconnect: a test opens a new one after an outage).
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private fields: ReportFields[] = [];

  private constructor(
    readonly nc: NatsConnection,
    private readonly namespace: string,
  ) {}

  static async start(url: string, namespace: string, everyMs = 100): Promise<Heartbeat> {
    const nc = await connect({ servers: url, name: 'sluice-e2e-heartbeat', reconnect: false });
    const beat = new Heartbeat(nc, namespace);
    beat.timer = setInterval(() => beat.publishAll(), everyMs);
    return beat;
  }

  /** Replaces the set of reports sent on every beat, and sends them at once. */
  set(...fields: ReportFields[]): void {
    this.fields = fields;
    this.publishAll();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    if (!this.nc.isClosed()) await this.nc.close();
  }

  private publishAll(): void {
    if (this.nc.isClosed()) return;
    for (const f of this.fields) {
      this.nc.publish(`namespace.${this.namespace}.kv_metrics`, JSON.stringify(kvReport(f)));
    }
  }
}

export interface TrafficResult {
  statuses: Record<number, number>;
  servedBy: Set<string | null>;
  slowestMs: number;
}

/**
 * Closed-loop clients sending chat completions (of `model`) until the returned function is
 * called, or for 60 s at most; that function resolves with what the clients saw.
 */
export function liveTraffic(
  base: string,
  clients: number,
  model = MODEL,
): () => Promise<TrafficResult> {
  const result: TrafficResult = { statuses: {}, servedBy: new Set(), slowestMs: 0 };
  let running = true;
  const deadline = Date.now() + 60_000;
  const loops = Array.from({ length: clients }, async () => {
    while (running && Date.now() < deadline) {
      const sent = Date.now();
      const res = await chat(base, { model });
      result.slowestMs = Math.max(result.slowestMs, Date.now() - sent);
      result.statuses[res.status] = (result.statuses[res.status] ?? 0) + 1;
      result.servedBy.add(res.headers.get('x-sluice-worker-id'));
    }
  });
  return async () => {
    running = false;
    await Promise.all(loops);
    return result;
  };
}
