import { connect, NatsConnection } from 'nats';
import { kvReport, ReportFields } from '@sluice/testkit';

export type { ReportFields } from '@sluice/testkit';

/** Publishes load reports (docs/api.md) on real NATS, as a worker would. */
export class ReportBus {
  private readonly encoder = new TextEncoder();
  private constructor(
    readonly nc: NatsConnection,
    readonly namespace: string,
  ) {}

  static async connect(url: string, namespace: string, name = 'sluice-bench'): Promise<ReportBus> {
    return new ReportBus(await connect({ servers: url, name }), namespace);
  }

  report(fields: ReportFields): void {
    const payload = kvReport({ max_num_batched_tokens: 8192, ...fields });
    this.nc.publish(
      `namespace.${this.namespace}.kv_metrics`,
      this.encoder.encode(JSON.stringify(payload)),
    );
  }

  async flush(): Promise<void> {
    await this.nc.flush();
  }

  async close(): Promise<void> {
    await this.nc.drain();
  }
}

/**
 * Keeps a fake worker alive by re-sending its latest report every second (as real workers do),
 * so the frontend's --worker-ttl-ms never forgets it during a long measurement.
 */
export class Heartbeat {
  private readonly latest = new Map<string, ReportFields>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly bus: ReportBus) {
    this.timer = setInterval(() => {
      for (const r of this.latest.values()) bus.report(r);
    }, 1000);
    this.timer.unref();
  }

  /** Publishes a report now and remembers it for the heartbeat. */
  set(r: ReportFields): void {
    this.latest.set(`${r.worker_id}/${r.dp_rank ?? 0}`, r);
    this.bus.report(r);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
