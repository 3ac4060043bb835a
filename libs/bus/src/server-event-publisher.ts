import type { NatsConnection } from 'nats';
import { EventPublisher } from './event-publisher';
import { NamespacedNatsServer } from './namespaced-nats.server';

const encoder = new TextEncoder();

/**
 * Publishes on the connection of a NATS transport server, so a process that listens (the
 * frontend's worker monitor) also publishes without a second connection. Best effort: before the
 * server's first connection, and after its last, a message is dropped (peers also resync).
 */
export class ServerEventPublisher extends EventPublisher {
  constructor(private readonly server: NamespacedNatsServer) {
    super();
  }

  publish(subject: string, payload: object): void {
    const nc = this.connection();
    if (nc && !nc.isClosed()) nc.publish(subject, encoder.encode(JSON.stringify(payload)));
  }

  /** The connection belongs to the server, which closes it. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  /** The server's NATS connection, or undefined until its first connection is made. */
  private connection(): NatsConnection | undefined {
    try {
      return this.server.unwrap<NatsConnection>();
    } catch {
      return undefined;
    }
  }
}
