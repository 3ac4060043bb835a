import type { IncomingMessage, ServerResponse } from 'node:http';
import { RawReplyFor } from '../admission/overload-prescan';
import { RefusalReply } from '../admission/refusal';
import { JSON_HEADERS } from './http-hardening';
import { AccessLog, REQUEST_ID_HEADER, requestIdFor } from './logging';

/**
 * Replies for the answers given before Fastify sees a request (the overload prescan): the
 * headers Fastify's hooks put on every JSON answer (`http-hardening.ts`, the request id) in the
 * order they put them, then what the writer sets, and the access log line when it is on. Node
 * adds `Date`, `Connection` and `Keep-Alive` as for any answer of the server.
 */
export function rawReplies(log: AccessLog | null): RawReplyFor {
  return (req, res, arrivedMs) => new RawReply(req, res, log, arrivedMs);
}

class RawReply implements RefusalReply {
  private status = 200;
  private readonly headers: Record<string, string | number>;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly log: AccessLog | null,
    private readonly arrivedMs: number,
  ) {
    this.headers = { ...JSON_HEADERS, [REQUEST_ID_HEADER]: requestIdFor(req) };
  }

  code(status: number): this {
    this.status = status;
    return this;
  }

  header(name: string, value: string): this {
    this.headers[name] = value;
    return this;
  }

  send(payload: Buffer): this {
    this.headers['content-length'] = payload.length;
    this.res.writeHead(this.status, this.headers);
    this.res.end(payload);
    this.log?.({
      reqId: this.headers[REQUEST_ID_HEADER] as string,
      method: this.req.method,
      url: this.req.url,
      statusCode: this.status,
      ms: performance.now() - this.arrivedMs,
    });
    return this;
  }
}
