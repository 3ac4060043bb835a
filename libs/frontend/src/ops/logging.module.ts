import { DynamicModule, RequestMethod } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import { LoggerModule } from 'nestjs-pino';
import { FrontendConfig } from '../config/frontend-config';

export const REQUEST_ID_HEADER = 'x-request-id';
const VALID_ID = /^[\w.:-]{1,128}$/;

/**
 * Fastify's request id (pino-http reuses it): the caller's `x-request-id` when it looks sane,
 * else a fresh UUID. Bootstrap echoes it in the response header.
 */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && VALID_ID.test(given) ? given : randomUUID();
}

/**
 * Structured JSON logs (pino). Every request gets an id, echoed in `x-request-id`; bodies and
 * credentials are never logged — the request serializer keeps method, url and id only.
 */
export function loggingModule(config: FrontendConfig): DynamicModule {
  return LoggerModule.forRoot({
    // Nest 11's router syntax for "every path" (the library's default '*' matches nothing here).
    forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
    pinoHttp: {
      level: config.logLevel,
      autoLogging: config.accessLog,
      quietReqLogger: true,
      redact: ['req.headers.authorization', 'req.headers.cookie'],
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({
          id: req.id,
          method: req.method,
          url: req.url,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    },
  });
}
