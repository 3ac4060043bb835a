import { connect, NatsConnection } from 'nats';
import { kvReport, ReportFields } from '@sluice/testkit';
import { NATS_URL } from './processes';

const encoder = new TextEncoder();

export { MODEL, type ReportFields } from '@sluice/testkit';

/** Publishes docs/api.md#nats-subjects messages on real NATS, as a worker (or anyone) would. */
export class TestBus {
  private constructor(readonly nc: NatsConnection) {}

  static async connect(): Promise<TestBus> {
    return new TestBus(await connect({ servers: NATS_URL, name: 'sluice-e2e' }));
  }

  report(namespace: string, fields: ReportFields): void {
    this.raw(namespace, 'kv_metrics', kvReport(fields));
  }

  workerDown(namespace: string, workerId: string): void {
    this.raw(namespace, 'worker_down', { worker_id: workerId });
  }

  raw(namespace: string, event: string, payload: unknown): void {
    const bytes = payload instanceof Uint8Array ? payload : encoder.encode(JSON.stringify(payload));
    this.nc.publish(`namespace.${namespace}.${event}`, bytes);
  }

  async flush(): Promise<void> {
    await this.nc.flush();
  }

  async close(): Promise<void> {
    await this.nc.drain();
  }
}
