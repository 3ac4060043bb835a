import { ConsumerDeserializer, IncomingEvent } from '@nestjs/microservices';

/**
 * Treats every message as a plain JSON event named by its channel. Nest's default NATS
 * deserializer unwraps payloads that carry a top-level `data` or `pattern` key and throws on
 * invalid JSON (an unhandled rejection); docs/api.md#nats-subjects payloads come from any publisher, so a
 * payload is never unwrapped and undecodable bytes become `undefined` for the handler to
 * count as malformed.
 */
export class RawJsonDeserializer implements ConsumerDeserializer {
  private readonly decoder = new TextDecoder();

  deserialize(value: unknown, options?: { channel?: string }): IncomingEvent {
    return { pattern: options?.channel ?? '', data: this.decode(value) };
  }

  private decode(value: unknown): unknown {
    try {
      if (value instanceof Uint8Array) return JSON.parse(this.decoder.decode(value));
      if (typeof value === 'string') return JSON.parse(value);
      return undefined;
    } catch {
      return undefined;
    }
  }
}
