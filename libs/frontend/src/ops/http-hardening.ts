import helmet from '@fastify/helmet';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { REQUEST_ID_HEADER } from './logging.module';

/**
 * HTTP defaults for a service on the request path: security headers (helmet; the status page
 * and the OpenAPI UI need inline styles and scripts from 'self'), JSON as the only request
 * body type (anything else is a 415), no CORS (Nest adds none unless asked), and the request
 * id echoed on every response.
 */
export async function hardenHttp(app: NestFastifyApplication): Promise<void> {
  await app.register(helmet, {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'", "'unsafe-inline'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
      },
    },
  });
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeContentTypeParser(['text/plain']);
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
