/**
 * Reference server of the rejection scenario: a bare Fastify app answering the overload 503
 * (same status, headers and body as Sluice) on the same route, after parsing the JSON body.
 *
 *   node .bench/bench/servers/bare-fastify.js PORT
 */
import Fastify from 'fastify';

const BODY = Buffer.from(
  '{"message":"Service temporarily unavailable: All workers are busy, please retry later","type":"service_unavailable","code":503}',
);

async function main(): Promise<void> {
  const port = Number(process.argv[2]);
  const app = Fastify({ logger: false });
  app.post('/v1/chat/completions', (_req, reply) => {
    void reply
      .code(503)
      .header('retry-after', '1')
      .header('content-type', 'application/json')
      .send(BODY);
  });
  await app.listen({ host: '127.0.0.1', port });
  process.stdout.write(`bare fastify listening on ${port}\n`);
  const stop = (): void => void app.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

void main();
