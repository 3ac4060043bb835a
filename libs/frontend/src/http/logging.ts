import { LoggerService } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import pino, { DestinationStream, Logger } from 'pino';
import pretty from 'pino-pretty';
import { LogLevel } from '../config/frontend-config';

export const REQUEST_ID_HEADER = 'x-request-id';
const VALID_ID = /^[\w.:-]{1,128}$/;

/**
 * Fastify's request id: the caller's `x-request-id` when it looks sane, else a fresh UUID.
 * It is echoed on every response and written to the audit row of a threshold change.
 */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && VALID_ID.test(given) ? given : randomUUID();
}

type Level = 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** Where log lines go: stdout unless a test says otherwise. */
export type LogOutput = NodeJS.WritableStream & { readonly isTTY?: boolean };

/**
 * Nest's logger over pino: one JSON line per event, `context` as a field, for log collectors;
 * on a terminal (`npm start` by hand) the same events as human lines instead. Request bodies
 * and credentials are never passed to it.
 */
export class PinoLoggerService implements LoggerService {
  constructor(readonly pino: Logger) {}

  static create(level: LogLevel, out: LogOutput = process.stdout): PinoLoggerService {
    const options = { level, base: { pid: process.pid } };
    if (out.isTTY) return new PinoLoggerService(pino(options, humanLines(out)));
    // stdout itself goes through pino's own synchronous writer, not the stream object.
    const destination = out === process.stdout ? undefined : (out as DestinationStream);
    return new PinoLoggerService(destination ? pino(options, destination) : pino(options));
  }

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  /** Nest passes the context as the last string argument, and an error's stack before it. */
  private write(level: Level, message: unknown, rest: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const context = typeof rest.at(-1) === 'string' ? (rest.at(-1) as string) : undefined;
    const stack = rest.length > 1 && typeof rest[0] === 'string' ? rest[0] : undefined;
    const fields: Record<string, unknown> = { context };
    if (stack) fields.stack = stack;
    if (message instanceof Error) {
      fields.err = { message: message.message, stack: message.stack };
      this.pino[level](fields, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level]({ ...fields, ...message });
    } else {
      this.pino[level](fields, String(message));
    }
  }
}

/** `12:00:01.234 INFO: [Sluice] frontend listening on …`, extra fields on the lines below. */
function humanLines(out: LogOutput): DestinationStream {
  return pretty({
    destination: out,
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,context',
    messageFormat: '{if context}[{context}] {end}{msg}',
  });
}

/** One access log line: the request, its status and how long it took to answer. */
export interface AccessLine {
  readonly reqId: string;
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly statusCode: number;
  readonly ms: number;
}

/** Writes access log lines (`--access-log true`), from Fastify's hook or an earlier answer. */
export type AccessLog = (line: AccessLine) => void;

/** `--access-log true`: one line per answered request, without bodies or headers. */
export function accessLog(logger: PinoLoggerService): AccessLog {
  return ({ reqId, method, url, statusCode, ms }) =>
    logger.pino.info(
      { context: 'Access', reqId, method, url, statusCode, ms: Math.round(ms * 10) / 10 },
      'request completed',
    );
}

/** The access log of every answer Fastify writes. */
export function installAccessLog(app: NestFastifyApplication, log: AccessLog): void {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onResponse', (request, reply, done) => {
      log({
        reqId: request.id,
        method: request.method,
        url: request.url,
        statusCode: reply.statusCode,
        ms: reply.elapsedTime,
      });
      done();
    });
}
