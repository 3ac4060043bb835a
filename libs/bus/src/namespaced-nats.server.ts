import { NatsOptions, ServerNats } from '@nestjs/microservices';
import { subjectFor } from '@sluice/contracts';
import type { Msg, NatsConnection, NatsError } from 'nats';
import { RawJsonDeserializer } from './raw-json.deserializer';

/**
 * Nest's NATS transport with two changes the contract needs: subjects carry the namespace
 * given at start (`@EventPattern` only knows the bare event name), and there is never a queue
 * group, so every frontend replica sees every report.
 */
export class NamespacedNatsServer extends ServerNats {
  constructor(
    options: NatsOptions['options'],
    private readonly namespace: string,
  ) {
    super({ ...options, queue: undefined, deserializer: new RawJsonDeserializer() });
  }

  override bindEvents(client: NatsConnection): void {
    for (const pattern of this.messageHandlers.keys()) {
      const handle = this.getMessageHandler(pattern) as (
        err: NatsError | null,
        msg: Msg,
      ) => Promise<unknown>;
      client.subscribe(subjectFor(this.namespace, pattern), {
        callback: (err: NatsError | null, msg: Msg) => {
          handle(err, msg).catch((e: unknown) => {
            this.logger.error(`handler for ${pattern} failed: ${String(e)}`);
          });
        },
      });
    }
  }
}
