import type { preParsingHookHandler } from 'fastify';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { PriorityClass } from '../config/priority';
import { EndpointLabel, endpointLabelFor } from '../metrics/metric-names';
import { PriorityReader } from '../priority/request-priority';
import { jsonBodyRefusal, MAX_JSON_DEPTH } from '../request-body/json-cost';
import { AdmissionDecision } from './admission-decision.service';
import { Refusal, RefusalReply } from './refusal';
import { BusyModels } from './busy-models';
import { readTopLevelFields, TopLevelFields } from '../request-body/top-level-fields';

/**
 * Bodies up to this size are read here while a refusal is possible; larger ones go straight
 * to the parser. Chat requests that meet an overload are mostly far smaller, and reading more
 * before knowing the answer would only move the parse's cost, not save it.
 */
export const PRESCAN_MAX_BYTES = 64 * 1024;

/** The content types Fastify hands to the JSON parser that are worth recognising here. */
const JSON_TYPE = 'application/json';
const JSON_UTF8_TYPE = 'application/json; charset=utf-8';

/** Counts and sends a refusal of the built-in decision (`early-refusal.hook.ts`). */
export type AnswerRefusal = (
  reply: RefusalReply,
  refusal: Refusal,
  endpoint: EndpointLabel,
  body: { model?: unknown; stream?: unknown } | null | undefined,
  priority: PriorityClass,
  /** The request's headers: the tenant an overload refusal is counted for (docs/api.md#tenants). */
  headers: IncomingHttpHeaders,
) => void;

/**
 * A reply on Node's own response, for an answer given before Fastify has seen the request.
 * Made by the HTTP floor (`http/raw-reply.ts`), which knows the headers every answer carries
 * and writes the access log.
 */
export type RawReplyFor = (
  req: IncomingMessage,
  res: ServerResponse,
  /** `performance.now()` when the request arrived, for the access log. */
  arrivedMs: number,
) => RefusalReply;

/** A request listener's next step: what the server would have done without the prescan. */
type Pass = () => void;

/**
 * The prescan of the OpenAI endpoints. Installed whatever the global admission mode, since a
 * model may enforce on its own (`admission_control`); it is armed only while some model is
 * refused (`BusyModels`), and answers only what the decision refuses: never a `shadow` or `none`
 * model. It runs in front of Fastify, on the server's `request` event (`installPrescan`), and
 * its `preParsing` hook hands what it read on to the parser.
 */
export function overloadPrescans(
  app: NestFastifyApplication,
  priority: PriorityReader,
  answer: AnswerRefusal,
  replyFor: RawReplyFor,
  /** Requests the guard answers itself (a key no tenant holds with `--require-tenant`). */
  leaveToGuard: (headers: IncomingHttpHeaders) => boolean = () => false,
): OverloadPrescan {
  const decision = app.get(AdmissionDecision);
  const busy = app.get(BusyModels);
  const bodyLimit = app.getHttpAdapter().getInstance().initialConfig.bodyLimit ?? Infinity;
  // Armed for a request only while some model refuses its class; an invalid header is left to
  // the guard's 400.
  const armedFor = (req: IncomingMessage): Armed<PriorityClass> | null => {
    if (!busy.any || req.method !== 'POST') return null;
    const c = priority.classOf(req.headers);
    if (c === undefined || !busy.anyFor(c) || leaveToGuard(req.headers)) return null;
    const endpoint = endpointLabelFor(req.url ?? '');
    return endpoint === undefined ? null : { c, endpoint };
  };
  return overloadPrescan(
    armedFor,
    (req, res, fields, { c, endpoint }, arrivedMs) => {
      const refusal = decision.decide(fields, c, req.headers);
      if (refusal !== null)
        answer(replyFor(req, res, arrivedMs), refusal, endpoint, fields, c, req.headers);
      return refusal !== null;
    },
    bodyLimit,
  );
}

/** What arms the prescan for one request: its class and its endpoint. */
interface Armed<C> {
  readonly c: C;
  readonly endpoint: EndpointLabel;
}

/**
 * The two halves of the prescan: `prescan` sees each request before Fastify does (the server's
 * `request` event) and may answer it; `replay` is the `preParsing` hook of the OpenAI routes that
 * gives the parser the bytes `prescan` read.
 */
export interface OverloadPrescan {
  readonly prescan: (req: IncomingMessage, res: ServerResponse, pass: Pass) => void;
  readonly replay: preParsingHookHandler;
}

/** Where the prescan leaves the body it read (or the error that cut it short) for `replay`. */
const READ = Symbol('sluice.prescanRead');
type Prescanned = IncomingMessage & { [READ]?: Replay };

/**
 * Answers admission refusals from the body's bytes before Fastify sees the request: no route
 * lookup, no request or reply object, no hook, no JSON parsed, no object built for a request
 * that gets the 503. It acts only while `armed(req)` says so (a POST to an OpenAI endpoint, and
 * some model refuses its class), on a JSON body with a declared length of at most `maxBytes`,
 * and answers only when the body is one the parser would have accepted (`readTopLevelFields`
 * vouches for it): then the answer is the one the parsed body would get. Otherwise the request
 * goes on to Fastify, and `replay` hands the bytes read (or the stream's error) to the parser
 * unchanged, as if never touched.
 */
export function overloadPrescan<A>(
  /** What the request is armed with while a refusal is possible for it, else null. */
  armed: (req: IncomingMessage) => A | null,
  /** Answers the request (true) when these fields are refused, else leaves it (false). */
  refuse: (
    req: IncomingMessage,
    res: ServerResponse,
    fields: TopLevelFields,
    armed: A,
    arrivedMs: number,
  ) => boolean,
  bodyLimit: number,
): OverloadPrescan {
  const maxBytes = Math.min(bodyLimit, PRESCAN_MAX_BYTES);
  return {
    prescan(req, res, pass) {
      const a = armed(req);
      if (a === null) return pass();
      const length = declaredLength(req.headers, maxBytes);
      if (length === null) return pass();
      const arrivedMs = performance.now();
      readWhole(req, (err, body) => {
        if (err) {
          (req as Prescanned)[READ] = new Replay(null, err);
          return pass();
        }
        const fields =
          body.length === length && jsonBodyRefusal(body) === undefined
            ? readTopLevelFields(body, MAX_JSON_DEPTH)
            : null;
        if (fields !== null && refuse(req, res, fields, a, arrivedMs)) return;
        (req as Prescanned)[READ] = new Replay(body, null);
        pass();
      });
    },
    replay(request, _reply, payload, done) {
      const read = (request.raw as Prescanned)[READ];
      if (read === undefined) return done(null, payload);
      (request.raw as Prescanned)[READ] = undefined;
      done(null, read);
    },
  };
}

/** The declared length of a JSON body the prescan reads whole, else null. */
function declaredLength(headers: IncomingHttpHeaders, maxBytes: number): number | null {
  const length = Number(headers['content-length']);
  return length > 0 &&
    length <= maxBytes &&
    headers['transfer-encoding'] === undefined &&
    isJsonType(headers['content-type'])
    ? length
    : null;
}

/** Two comparisons: a set lookup hashes the header's fresh string first. */
function isJsonType(type: string | undefined): boolean {
  return type === JSON_TYPE || type === JSON_UTF8_TYPE;
}

/**
 * Puts the prescan in front of the server's own `request` listener (Fastify's): a request the
 * prescan does not answer reaches Fastify exactly as it would have, in the same turn when the
 * prescan is not armed.
 */
export function installPrescan(server: Server, prescan: OverloadPrescan['prescan']): void {
  const listeners = server.listeners('request') as Array<
    (req: IncomingMessage, res: ServerResponse) => void
  >;
  if (listeners.length !== 1) {
    throw new Error(`expected one request listener (Fastify's), found ${listeners.length}`);
  }
  const [next] = listeners;
  server.removeListener('request', next);
  server.on('request', (req: IncomingMessage, res: ServerResponse) =>
    prescan(req, res, () => next(req, res)),
  );
}

/**
 * Collects a request body as Node's HTTP parser hands it over, by taking the request's `push`
 * (the one way the parser gives a request its bytes: each chunk, then null at the end of the
 * message, which Node's parser makes its Content-Length). The chunks go to this reader instead
 * of the stream's buffer, and the end reaches the stream as usual, so the request ends as an
 * empty, complete stream; `cb` then runs at once, still inside the parser's callback, which is
 * where a `request` listener answers a request without a body too. Reading through the stream's
 * `data` and `end` events instead (listeners, flowing mode, the answer a tick later) costs each
 * refusal more CPU. A stream error (the client went away mid-body) ends the read with that
 * error; `settled` keeps a late one from answering twice.
 */
function readWhole(req: IncomingMessage, cb: (err: Error | null, body: Buffer) => void): void {
  let chunks: Buffer[] = [];
  let received = 0;
  let settled = false;
  const push = req.push.bind(req);
  const finish = (err?: Error): void => {
    if (settled) return;
    settled = true;
    const read = chunks;
    chunks = [];
    if (err) return cb(err, Buffer.alloc(0));
    cb(null, read.length === 1 ? read[0] : Buffer.concat(read, received));
  };
  req.push = (chunk: Buffer | null): boolean => {
    // After an error, whatever still comes goes to the stream as usual.
    if (settled) return push(chunk);
    if (chunk !== null) {
      received += chunk.length;
      chunks.push(chunk);
      return true;
    }
    push(null);
    finish();
    return false;
  };
  req.on('error', finish);
}

/**
 * What the parser reads instead of the request once the body was read here: the same bytes,
 * or the same error (which the parser answers as it would have).
 */
class Replay extends Readable {
  constructor(
    private body: Buffer | null,
    private readonly failure: Error | null,
  ) {
    super();
  }

  override _read(): void {
    if (this.failure) return void this.destroy(this.failure);
    this.push(this.body);
    this.body = null;
    this.push(null);
  }
}
