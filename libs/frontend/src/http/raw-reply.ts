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

/** `JSON_HEADERS` as Node's flat name/value list, in their order. */
const JSON_HEADER_LIST: readonly string[] = Object.entries(JSON_HEADERS).flat();

/**
 * The head is kept as a flat name/value list, which `writeHead` takes as it is: an object
 * built with the request id as a computed key, then grown by each header, went through V8's
 * slow paths for adding properties on every refusal.
 */
class RawReply implements RefusalReply {
  private status = 200;
  private readonly id: string;
  /** The head after Fastify's headers: what the writer set, in its order. */
  private readonly own: string[] = [];

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly log: AccessLog | null,
    private readonly arrivedMs: number,
  ) {
    this.id = requestIdFor(req);
  }

  code(status: number): this {
    this.status = status;
    return this;
  }

  /** Adds a header; the writer sets each at most once. */
  header(name: string, value: string): this {
    this.own.push(name, value);
    return this;
  }

  /**
   * Writes the head and the body. The body goes to Node as a latin1 string when the writer has
   * one (`RefusalReply.send`): Node then joins it to the head and makes one plain write, where a
   * Buffer body is gathered with the head into a vectored write, which costs the main thread
   * more per refusal.
   */
  send(payload: Buffer, latin1?: string): this {
    // A copy grown by push: `concat` is a runtime call that costs more than the copy.
    const head = JSON_HEADER_LIST.slice();
    head.push(REQUEST_ID_HEADER, this.id);
    for (const part of this.own) head.push(part);
    head.push('content-length', String(payload.length));
    this.res.writeHead(this.status, head);
    if (latin1 === undefined) this.res.end(payload);
    else this.res.end(latin1, 'latin1');
    this.log?.({
      reqId: this.id,
      method: this.req.method,
      url: this.req.url,
      statusCode: this.status,
      ms: performance.now() - this.arrivedMs,
    });
    return this;
  }
}
