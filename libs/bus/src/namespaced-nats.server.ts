import { NatsContext, NatsOptions, ServerNats } from '@nestjs/microservices';
import { subjectFor } from '@sluice/contracts';
import type { Msg, NatsConnection, NatsError } from 'nats';
import { RawJsonDeserializer } from './raw-json.deserializer';

/**
 * Nest's NATS transport with two changes the contract needs: subjects carry the namespace
 * given at start (`@EventPattern` only knows the bare event name), and there is never a queue
 * group, so every frontend replica sees every report.
 *
 * Load reports arrive tens of thousands of times a second, so the per-message path is kept
 * short: the payload is decoded synchronously (the deserializer never awaits) and handed to
 * `handleEvent`, which still runs the `@EventPattern` handler through Nest's pipes, filters and
 * processing hooks; the pattern-to-route lookup that Nest redoes (with a throwing
 * `JSON.parse`) for every message is computed once per subscribed pattern.
 */
export class NamespacedNatsServer extends ServerNats {
  private readonly raw = new RawJsonDeserializer();
  /** Route of each subscribed pattern; only these ever reach `getRouteFromPattern`. */
  private readonly routes = new Map<string, string>();

  constructor(
    options: NatsOptions['options'],
    private readonly namespace: string,
  ) {
    super({ ...options, queue: undefined, deserializer: new RawJsonDeserializer() });
  }

  override bindEvents(client: NatsConnection): void {
    for (const pattern of this.messageHandlers.keys()) {
      this.routes.set(pattern, super.getRouteFromPattern(pattern));
      client.subscribe(subjectFor(this.namespace, pattern), {
        callback: (err: NatsError | null, msg: Msg) => this.onMessage(pattern, err, msg),
      });
    }
  }

  protected override getRouteFromPattern(pattern: string): string {
    return this.routes.get(pattern) ?? super.getRouteFromPattern(pattern);
  }

  private onMessage(pattern: string, err: NatsError | null, msg: Msg): void {
    if (err) return void this.logger.error(`subscription for ${pattern} failed: ${String(err)}`);
    const packet = this.raw.deserialize(msg.data, { channel: pattern });
    const context = new NatsContext([msg.subject, msg.headers]);
    this.handleEvent(pattern, packet, context).catch((e: unknown) => {
      this.logger.error(`handler for ${pattern} failed: ${String(e)}`);
    });
  }
}
