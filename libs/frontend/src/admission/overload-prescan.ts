import type { FastifyReply, FastifyRequest, preParsingHookHandler } from 'fastify';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Readable } from 'node:stream';
import { FrontendConfig } from '../config/frontend-config';
import { PriorityClass } from '../config/priority';
import { EndpointLabel } from '../metrics/metric-names';
import { PriorityReader } from '../priority/request-priority';
import { jsonBodyRefusal, MAX_JSON_DEPTH } from '../request-body/json-cost';
import { AdmissionDecision } from './admission-decision.service';
import { Refusal } from './refusal';
import { BusyModels } from './busy-models';
import { readTopLevelFields, TopLevelFields } from '../request-body/top-level-fields';

/**
 * Bodies up to this size are read here while a refusal is possible; larger ones go straight
 * to the parser. Chat requests that meet an overload are mostly far smaller, and reading more
 * before knowing the answer would only move the parse's cost, not save it.
 */
export const PRESCAN_MAX_BYTES = 64 * 1024;

/** The content types Fastify hands to the JSON parser that are worth recognising here. */
const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8']);

/** Counts and sends a refusal of the built-in decision (`admission.hook.ts`). */
export type AnswerRefusal = (
  reply: FastifyReply,
  refusal: Refusal,
  endpoint: EndpointLabel,
  body: { model?: unknown; stream?: unknown } | null | undefined,
  priority: PriorityClass,
) => void;

/**
 * The prescan hook of each OpenAI endpoint, or null when admission control is off (nothing is
 * ever refused for being busy then).
 */
export function overloadPrescans(
  app: NestFastifyApplication,
  priority: PriorityReader,
  answer: AnswerRefusal,
): (endpoint: EndpointLabel) => preParsingHookHandler | null {
  if (app.get(FrontendConfig).admissionControl !== 'token-capacity') return () => null;
  const decision = app.get(AdmissionDecision);
  const busy = app.get(BusyModels);
  const bodyLimit = app.getHttpAdapter().getInstance().initialConfig.bodyLimit ?? Infinity;
  // Armed for a request only while some model refuses its class; an invalid header is left to
  // the guard's 400.
  const armedFor = (request: FastifyRequest): PriorityClass | null => {
    if (!busy.any) return null;
    const c = priority.classOf(request.headers);
    return c !== undefined && busy.anyFor(c) ? c : null;
  };
  return (endpoint) =>
    overloadPrescan(
      armedFor,
      (reply, fields, c) => {
        const refusal = decision.decide(fields, c);
        if (refusal !== null) answer(reply, refusal, endpoint, fields, c);
        return refusal !== null;
      },
      bodyLimit,
    );
}

/**
 * A `preParsing` hook that answers admission refusals from the body's bytes, before Fastify's
 * body parser runs: no JSON is parsed, no object built for a request that gets the 503. It
 * acts only while `armed(request)` gives the request's priority class (some model refuses that
 * class), on a JSON body with a declared length of
 * at most `maxBytes`, and answers only when the body is one the parser would have accepted
 * (`readTopLevelFields` vouches for it): then the answer is the one the parsed body would
 * get. Otherwise the bytes read go on to the parser unchanged, as if never touched.
 */
export function overloadPrescan<C>(
  /** The request's class while a refusal is possible for it, else null. */
  armed: (request: FastifyRequest) => C | null,
  /** Answers the request (true) when these fields are refused, else leaves it (false). */
  refuse: (reply: FastifyReply, fields: TopLevelFields, c: C) => boolean,
  bodyLimit: number,
): preParsingHookHandler {
  const maxBytes = Math.min(bodyLimit, PRESCAN_MAX_BYTES);
  return function prescan(request, reply, payload, done) {
    const headers = request.headers;
    const length = Number(headers['content-length']);
    const c = armed(request);
    if (
      c === null ||
      !(length > 0 && length <= maxBytes) ||
      headers['transfer-encoding'] !== undefined ||
      !JSON_TYPES.has(headers['content-type'] as string)
    ) {
      return done(null, payload);
    }
    readWhole(payload, (err, body) => {
      if (err) return done(null, new Replay(null, err));
      const fields =
        body.length === length && jsonBodyRefusal(body) === undefined
          ? readTopLevelFields(body, MAX_JSON_DEPTH)
          : null;
      if (fields !== null && refuse(reply, fields, c)) return;
      done(null, new Replay(body, null));
    });
  };
}

/** Collects a request body (Node's parser stops at its Content-Length). */
function readWhole(
  payload: NodeJS.ReadableStream,
  cb: (err: Error | null, body: Buffer) => void,
): void {
  const chunks: Buffer[] = [];
  let received = 0;
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    chunks.push(chunk);
  };
  const finish = (err?: Error): void => {
    payload.removeListener('data', onData);
    payload.removeListener('end', finish);
    payload.removeListener('error', finish);
    if (err) return cb(err, Buffer.alloc(0));
    cb(null, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
  };
  payload.on('data', onData);
  payload.on('end', finish);
  payload.on('error', finish);
  payload.resume();
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
