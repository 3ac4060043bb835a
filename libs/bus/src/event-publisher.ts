import { redactCredentials } from '@sluice/contracts';
import { Logger } from '@nestjs/common';
import { connect, NatsConnection } from 'nats';
import { InProcessBus } from './in-process-bus';
import { natsConnectionOptions } from './nats-options';

/** Where a worker sends its docs/api.md#nats-subjects events: NATS, or the embedded in-process bus. */
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

/** How long `connect` waits for a reachable server before it lets the worker serve without it. */
const FIRST_CONNECT_WAIT_MS = 1000;

/**
 * Publishes plain JSON (not Nest's `{pattern, data}` envelope) so any NATS consumer can read
 * it. The client reconnects forever. A report is a snapshot, so one that cannot leave now is not
 * worth keeping: while NATS is unreachable reports are dropped and the next periodic one carries
 * the current state. NATS being down at start does not hold the worker up either: `connect`
 * resolves after at most a second and the connection comes up in the background.
 */
export class NatsEventPublisher extends EventPublisher {
  private nc: NatsConnection | undefined;
  private closing = false;
  private waited = false;

  private constructor() {
    super();
  }

  static async connect(url: string, name: string): Promise<NatsEventPublisher> {
    const logger = new Logger('NatsEventPublisher');
    // The URL may carry a user and password (or a token): never in a log line.
    const shown = redactCredentials(url);
    const publisher = new NatsEventPublisher();
    const connecting = connect(natsConnectionOptions(url, name)).then(
      (nc) => {
        if (publisher.closing) return void nc.close();
        publisher.nc = nc;
        if (publisher.waited)
          logger.warn(`NATS at ${shown} reachable now: publishing load reports`);
      },
      (err: unknown) => logger.error(`cannot connect to NATS at ${shown}: ${String(err)}`),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      connecting,
      new Promise((resolve) => (timer = setTimeout(resolve, FIRST_CONNECT_WAIT_MS))),
    ]);
    clearTimeout(timer);
    if (!publisher.nc) {
      publisher.waited = true;
      logger.warn(`NATS at ${shown} not reachable yet: serving without load reports, retrying`);
    }
    return publisher;
  }

  publish(subject: string, payload: object): void {
    if (!this.nc || this.nc.isClosed()) return;
    this.nc.publish(subject, encoder.encode(JSON.stringify(payload)));
  }

  async close(): Promise<void> {
    this.closing = true;
    if (!this.nc || this.nc.isClosed()) return;
    await this.nc.drain();
  }
}
