import {
  errorCodes,
  type FastifyBodyParser,
  type FastifyError,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { BadRequestException, RawBodyRequest } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import helmet from 'helmet';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex, Readable } from 'node:stream';
import { encodeErrorBody } from '../errors/error-body';
import { bodyCost, jsonBodyRefusalFor } from '../request-body/json-cost';
import { REQUEST_ID_HEADER } from './logging';

/*
 * Pages a browser renders (`/ui`, `/docs`) get helmet's full set; JSON answers only what
 * applies to them (`x-content-type-options`, `x-frame-options`).
 */

/** Helmet's headers that apply to a JSON answer, on every answer but the browser pages'. */
export const JSON_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'SAMEORIGIN',
};

/**
 * Helmet's headers, computed once: running helmet's middleware per request re-parses its whole
 * configuration, which on the rejection path costs more than the rejection itself.
 */
function helmetHeaders(): Record<string, string> {
  const headers = new Map<string, string>();
  const res = {
    setHeader: (name: string, value: string) => headers.set(name.toLowerCase(), String(value)),
    removeHeader: (name: string) => headers.delete(name.toLowerCase()),
  } as unknown as ServerResponse;
  helmet({
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'", "'unsafe-inline'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
      },
    },
  })({} as IncomingMessage, res, () => undefined);
  return Object.fromEntries(headers);
}

/**
 * HTTP defaults for a service on the request path: helmet's security headers (the status page
 * and the OpenAPI UI need inline styles and scripts from 'self'), JSON as the only request body
 * type (anything else is a 415), no CORS (Nest adds none unless asked), and the request id
 * echoed on every response.
 */
export function hardenHttp(app: NestFastifyApplication): void {
  const browserHeaders = helmetHeaders();
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeContentTypeParser(['text/plain']);
  jsonBodiesOnly(app);
  // Fastify's own header object, not `reply.raw.setHeader`: headers set on the raw response
  // make Node merge and re-validate every header one by one when Fastify writes the head.
  fastify.addHook('onRequest', (request, reply, done) => {
    const url = request.url;
    reply.headers(url.startsWith('/ui') || url.startsWith('/docs') ? browserHeaders : JSON_HEADERS);
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}

/**
 * JSON is the only body Sluice reads. Registering its parser here, with Nest's own turned off
 * (`bodyParser: false` in `bootstrap.ts`; Nest's init would refuse to add its JSON parser over
 * this one), keeps Nest from adding its `application/x-www-form-urlencoded` one: an HTML form on
 * any web page can send that cross-origin without a CORS preflight, so accepting it would open
 * threshold writes to CSRF. Also bounds what parsing a body may build (nesting, values, objects:
 * `json-cost.ts`) while it arrives, so that only requests with a body pay for it, and answers
 * unparseable HTTP with the contract's error body.
 */
function jsonBodiesOnly(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  const json = fastify.getDefaultJsonParser('error', 'error');
  fastify.decorateRequest('rawBody', null);
  fastify.addContentTypeParser(
    'application/json',
    readJsonBody(json, fastify.initialConfig.bodyLimit ?? Infinity),
  );
  // Fastify attached its own listener when the adapter was made; its body is not contract-shaped.
  const server: Server = app.getHttpServer();
  server.removeAllListeners('clientError');
  server.on('clientError', answerClientError);
  server.on('connection', (socket: Socket) => {
    socket.destroySoon = lingerThenClose;
  });
}

type ParserDone = (err: Error | null, body?: unknown) => void;

/**
 * Reads a JSON body from the request stream, counting its JSON cost chunk by chunk as it arrives
 * (docs/security.md#limits-and-hardening): a body over a limit is answered 400 at the chunk that goes over, without the
 * rest of it ever being held (a hostile 16 MiB body of small values or empty containers goes over
 * within its first 3 MB). The rest is read and dropped, and the answer closes the connection
 * (`lingerThenClose`), as for a body over the size limit. Otherwise this does what Fastify's
 * reading of a whole body does, with its errors: 413 past `limit` (declared, or received when
 * chunked), 400 when the bytes differ from `Content-Length`, a stream's own error as a 400 unless
 * it carries a status. Sluice's routes set no body limit of their own.
 */
export function readJsonBody(
  json: FastifyBodyParser<string>,
  limit: number,
): (request: FastifyRequest, payload: Readable, done: ParserDone) => void {
  return (request, payload, done) => {
    const declared = Number(request.headers['content-length']);
    if (declared > limit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), undefined);
    const cost = bodyCost(declared);
    // The request, or what a preParsing hook gave in its place (a decoder counts what it read).
    const stream = payload as Readable & { receivedEncodedLength?: number };
    const chunks: Buffer[] = [];
    let received = 0;
    const detach = (): void => {
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onEnd);
    };
    // On a refusal the stream keeps flowing to no listener: what is still to come is dropped.
    const refuse = (err: Error): void => {
      detach();
      done(err, undefined);
    };
    function onData(chunk: Buffer): void {
      received += chunk.length;
      if (received > limit || (stream.receivedEncodedLength ?? 0) > limit) {
        return refuse(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      }
      const over = cost?.push(chunk);
      if (over !== undefined) return refuse(new BadRequestException(jsonBodyRefusalFor(over)));
      chunks.push(chunk);
    }
    function onEnd(err?: Error & { statusCode?: number }): void {
      detach();
      if (err) {
        if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
        return done(err, undefined);
      }
      if (!Number.isNaN(declared) && (stream.receivedEncodedLength || received) !== declared) {
        return done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH(), undefined);
      }
      // Node's HTTP parser gives each chunk memory of its own, so a lone chunk is kept as is.
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
      // Kept so that the proxy forwards the body as received instead of serialising it again.
      (request as RawBodyRequest<typeof request>).rawBody = body;
      void json(request, body.toString('utf8'), done);
    }
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onEnd);
    stream.resume();
  };
}

/** How long a closing connection keeps reading what the client still sends (nginx: 5 s). */
export const LINGER_MS = 5000;

/**
 * Node closes a `Connection: close` response's socket as soon as the answer is written. When the
 * client is still sending (a body over the limit is answered 413 before it has arrived), the
 * kernel then resets the connection and the client loses the answer it had not read yet. Like
 * nginx's `lingering_close`, this sends the answer and our FIN, then reads and discards until
 * the client closes its side or LINGER_MS pass, and only then closes the socket.
 */
function lingerThenClose(this: Socket): void {
  if (this.writable) this.end();
  if (this.destroyed) return;
  const timer = setTimeout(() => this.destroy(), LINGER_MS);
  timer.unref();
  this.once('close', () => clearTimeout(timer));
  this.once('end', () => this.destroy());
  this.resume();
}

/**
 * Bytes Node's HTTP parser cannot read (a NUL or raw non-ASCII in the request line, a bad
 * header name, oversized headers, broken chunking): answered with the contract's error body,
 * then the connection is closed, as Fastify's own handler does.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const status =
    err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message =
    status === 431
      ? 'Request header fields too large'
      : status === 408
        ? 'Request timed out'
        : 'Malformed HTTP request';
  const body = encodeErrorBody(message, 'invalid_request_error', status);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.toString()}`,
    );
  }
  socket.destroy(err);
}

/**
 * Fastify's own early errors (a path with broken percent-encoding, a bad request id, …) happen
 * before any route runs, so Nest's exception filter never sees them: answer them in the
 * contract's shape here.
 */
export function answerFrameworkError(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  const code = error.statusCode;
  const status = code !== undefined && code >= 400 && code < 500 ? code : 400;
  void reply
    .code(status)
    .header('content-type', 'application/json')
    .send(encodeErrorBody(error.message, 'invalid_request_error', status));
}
