import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/**
 * Server-sent events written straight to the socket: the reply is hijacked so that neither
 * Fastify nor Nest serialises or buffers anything, and each event leaves as it is produced.
 */
export class SseStream {
  private constructor(private readonly res: ServerResponse) {}

  static open(reply: FastifyReply): SseStream {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      // Proxies such as nginx would otherwise hold events back.
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    return new SseStream(res);
  }

  /** Runs when the client goes away, and also after `end()`. */
  onClose(listener: () => void): void {
    this.res.once('close', listener);
  }

  send(payload: object): void {
    if (this.isOpen()) this.res.write(`data: ${JSON.stringify(payload)}\n\n`);
  }

  end(): void {
    if (this.isOpen()) this.res.end('data: [DONE]\n\n');
  }

  /** Cuts the stream without `[DONE]`, so the client can tell it is incomplete. */
  abort(): void {
    this.res.destroy();
  }

  private isOpen(): boolean {
    return !this.res.destroyed && !this.res.writableEnded;
  }
}
