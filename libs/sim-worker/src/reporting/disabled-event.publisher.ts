import { EventPublisher } from '@sluice/bus';

/** Stands in when no bus is configured, so the reporter never has to check for one. */
export class DisabledEventPublisher extends EventPublisher {
  publish(): void {
    // Nothing to publish to: a standalone worker without --nats-url only serves HTTP.
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
