import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { BadRequestException } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import helmet from 'helmet';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { REQUEST_ID_HEADER } from './logging';

/**
 * JSON nested deeper than this is refused with a 400 before any handler walks it: validation
 * (class-transformer), the token estimate and the proxy's re-serialisation all recurse, and a
 * few kilobytes of `[[[[…` would otherwise overflow the stack into a 500. Real OpenAI bodies,
 * tool schemas included, stay far below it.
 */
export const MAX_JSON_DEPTH = 128;

/** Pages a browser renders get helmet's full set; JSON answers only what applies to them. */
const BROWSER_PREFIXES = ['/ui', '/docs'];
const API_HEADERS: Array<[string, string]> = [
  ['x-content-type-options', 'nosniff'],
  ['x-frame-options', 'SAMEORIGIN'],
];

/**
 * Helmet's headers, computed once: running helmet's middleware per request re-parses its whole
 * configuration, which on the rejection path costs more than the rejection itself.
 */
function helmetHeaders(): Array<[string, string]> {
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
  return [...headers.entries()];
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
  fastify.addHook('onRequest', (request, reply, done) => {
    const url = request.url;
    const headers = BROWSER_PREFIXES.some((p) => url.startsWith(p)) ? browserHeaders : API_HEADERS;
    for (const [name, value] of headers) reply.raw.setHeader(name, value);
    reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
    done();
  });
}

/**
 * JSON is the only body Sluice reads. Registering its parser here keeps Nest from adding its
 * `application/x-www-form-urlencoded` one at init: an HTML form on any web page can send that
 * cross-origin without a CORS preflight, so accepting it would open threshold writes to CSRF.
 * Also bounds nesting depth and answers unparseable HTTP with the contract's error body.
 */
function jsonBodiesOnly(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  const json = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser<Server>(
    'application/json',
    { bodyLimit: fastify.initialConfig.bodyLimit },
    (request, body, done) => json(request, body.toString('utf8'), done),
  );
  fastify.addHook('preValidation', (request, _reply, done) => {
    done(
      nestedDeeperThan(request.body, MAX_JSON_DEPTH)
        ? new BadRequestException(`JSON body nested deeper than ${MAX_JSON_DEPTH} levels`)
        : undefined,
    );
  });
  // Fastify attached its own listener when the adapter was made; its body is not contract-shaped.
  const server: Server = app.getHttpServer();
  server.removeAllListeners('clientError');
  server.on('clientError', answerClientError);
}

/** Iterative, so the check itself cannot overflow the stack. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<{ node: object; depth: number }> = [{ node: value, depth: 1 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (item.depth > max) return true;
    const children: unknown[] = Array.isArray(item.node) ? item.node : Object.values(item.node);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) {
        stack.push({ node: child, depth: item.depth + 1 });
      }
    }
  }
  return false;
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
  const body = JSON.stringify({ message, type: 'invalid_request_error', code: status });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
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
  const body = { message: error.message, type: 'invalid_request_error', code: status };
  void reply
    .code(status)
    .header('content-type', 'application/json')
    .send(Buffer.from(JSON.stringify(body)));
}
