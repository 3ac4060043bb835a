import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FrontendConfig } from '../config/frontend-config';
import { hardenHttp } from './http-hardening';
import { RawReplyFor } from '../admission/overload-prescan';
import { accessLog, installAccessLog, PinoLoggerService } from './logging';
import { setupOpenApi } from './openapi';
import { rawReplies } from './raw-reply';

/**
 * What the HTTP face needs of Fastify itself, before `app.init()`: hardening (headers, JSON
 * only, bounded bodies, contract-shaped parser errors), the access log, and the OpenAPI pages.
 * Returns how an answer given before Fastify sees the request gets the same headers and log.
 */
export function installHttp(
  app: NestFastifyApplication,
  config: FrontendConfig,
  logger: PinoLoggerService,
): RawReplyFor {
  hardenHttp(app);
  const log = config.accessLog ? accessLog(logger) : null;
  if (log) installAccessLog(app, log);
  setupOpenApi(app, config);
  return rawReplies(log);
}
