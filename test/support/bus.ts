import { connect, NatsConnection } from 'nats';
import { NATS_URL } from './processes';

const encoder = new TextEncoder();

export interface ReportFields {
  worker_id: string;
  endpoint: string;
  model?: string;
  dp_rank?: number;
  dp_size?: number;
  active_decode_blocks?: number;
  kv_total_blocks?: number;
  active_prefill_tokens?: number;
  max_num_batched_tokens?: number;
}

export const MODEL = 'Qwen/Qwen3-0.6B';

/** Publishes contract §4 messages on real NATS, as a worker (or anyone) would. */
export class TestBus {
  private constructor(readonly nc: NatsConnection) {}

  static async connect(): Promise<TestBus> {
    return new TestBus(await connect({ servers: NATS_URL, name: 'sluice-e2e' }));
  }

  report(namespace: string, fields: ReportFields): void {
    this.raw(namespace, 'kv_metrics', {
      model: MODEL,
      dp_rank: 0,
      dp_size: 1,
      active_decode_blocks: 0,
      kv_total_blocks: 100,
      active_prefill_tokens: 0,
      timestamp_ms: Date.now(),
      ...fields,
    });
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
