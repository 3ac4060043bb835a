import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FrontendConfig } from '../config/frontend-config';
import { hardenHttp } from './http-hardening';
import { installAccessLog, PinoLoggerService } from './logging';
import { setupOpenApi } from './openapi';

/**
 * What the HTTP face needs of Fastify itself, before `app.init()`: hardening (headers, JSON
 * only, bounded bodies, contract-shaped parser errors), the access log, and the OpenAPI pages.
 */
export function installHttp(
  app: NestFastifyApplication,
  config: FrontendConfig,
  logger: PinoLoggerService,
): void {
  hardenHttp(app);
  if (config.accessLog) installAccessLog(app, logger);
  setupOpenApi(app, config);
}
