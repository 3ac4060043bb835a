import { connect, NatsConnection } from 'nats';
import { InProcessBus } from './in-process-bus';

/** Where a worker sends its contract §4 events: NATS, or the embedded in-process bus. */
export abstract class EventPublisher {
  abstract publish(subject: string, payload: object): void;
  abstract close(): Promise<void>;
}

const encoder = new TextEncoder();

export class InProcessEventPublisher extends EventPublisher {
  constructor(private readonly bus: InProcessBus) {
    super();
  }

  publish(subject: string, payload: object): void {
    this.bus.publish(subject, encoder.encode(JSON.stringify(payload)));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Publishes plain JSON (not Nest's `{pattern, data}` envelope) so any NATS consumer can read
 * it. The client reconnects forever and buffers while disconnected.
 */
export class NatsEventPublisher extends EventPublisher {
  private constructor(private readonly nc: NatsConnection) {
    super();
  }

  static async connect(url: string, name: string): Promise<NatsEventPublisher> {
    const nc = await connect({
      servers: url,
      name,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      waitOnFirstConnect: true,
    });
    return new NatsEventPublisher(nc);
  }

  publish(subject: string, payload: object): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(subject, encoder.encode(JSON.stringify(payload)));
  }

  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    await this.nc.drain();
  }
}
