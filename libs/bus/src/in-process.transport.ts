import { BaseRpcContext, CustomTransportStrategy, Server } from '@nestjs/microservices';
import { subjectFor } from '@sluice/contracts';
import { InProcessBus } from './in-process-bus';
import { RawJsonDeserializer } from './raw-json.deserializer';

/**
 * Nest transport strategy over the in-process bus: `@EventPattern('kv_metrics')` handlers
 * receive `namespace.<ns>.kv_metrics` exactly as they would from the NATS transport.
 */
export class InProcessTransport extends Server implements CustomTransportStrategy {
  private readonly unsubscribers: Array<() => void> = [];
  private readonly rawDeserializer = new RawJsonDeserializer();
  /** Route of each subscribed pattern, so Nest does not re-derive it for every message. */
  private readonly routes = new Map<string, string>();

  constructor(
    private readonly bus: InProcessBus,
    private readonly namespace: string,
  ) {
    super();
  }

  listen(callback: () => void): void {
    for (const pattern of this.messageHandlers.keys()) {
      this.routes.set(pattern, super.getRouteFromPattern(pattern));
      const subject = subjectFor(this.namespace, pattern);
      const context = new BaseRpcContext([subject]);
      this.unsubscribers.push(
        this.bus.subscribe(subject, (bytes) => {
          const packet = this.rawDeserializer.deserialize(bytes, { channel: pattern });
          this.handleEvent(pattern, packet, context).catch((err: unknown) => {
            this.logger.error(`handler for ${subject} failed: ${String(err)}`);
          });
        }),
      );
    }
    callback();
  }

  protected override getRouteFromPattern(pattern: string): string {
    return this.routes.get(pattern) ?? super.getRouteFromPattern(pattern);
  }

  close(): void {
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
  }

  on(): void {
    // The in-process bus has no connection whose status could change.
  }

  unwrap<T>(): T {
    return this.bus as T;
  }
}
