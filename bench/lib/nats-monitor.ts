import { httpGet } from './http';

export interface ConnStats {
  outMsgs: number;
  pendingBytes: number;
}

/** Reads a private nats-server's monitoring endpoints (/varz, /connz). */
export class NatsMonitor {
  constructor(private readonly base: string) {}

  async slowConsumers(): Promise<number> {
    const v = JSON.parse((await httpGet(`${this.base}/varz`)).text) as { slow_consumers: number };
    return v.slow_consumers;
  }

  /** Messages delivered to and bytes pending for the connection(s) with this name. */
  async connection(name: string): Promise<ConnStats> {
    const c = JSON.parse((await httpGet(`${this.base}/connz?limit=1024`)).text) as {
      connections: Array<{ name?: string; out_msgs: number; pending_bytes: number }>;
    };
    const mine = c.connections.filter((x) => x.name === name);
    return {
      outMsgs: mine.reduce((a, x) => a + x.out_msgs, 0),
      pendingBytes: mine.reduce((a, x) => a + x.pending_bytes, 0),
    };
  }
}
