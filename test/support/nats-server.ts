import { connect, NatsConnection } from 'nats';
import { kvReport, MODEL, ReportFields } from '@sluice/testkit';
import { chat } from './http';

export { NatsServer } from '@sluice/testkit';

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
 * Publishes docs/api.md#nats-subjects reports for test-controlled workers every `everyMs` on its own NATS
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
  const result: TrafficResult = { statuses: {}, servedBy: new Set() };
  let running = true;
  const deadline = Date.now() + 60_000;
  const loops = Array.from({ length: clients }, async () => {
    while (running && Date.now() < deadline) {
      const res = await chat(base, { model });
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
