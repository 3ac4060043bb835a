import { Logger } from '@nestjs/common';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import {
  createThresholdDataSource,
  FrontendModule,
  parseFrontendFlags,
  runMigrations,
} from '@sluice/frontend';
import { register } from 'prom-client';
import { connectMonitor } from '../libs/frontend/src/transport/connect-monitor';
import { MODEL, TestBus } from './support/bus';
import { OVERLOAD_BODY } from './support/http';
import { createTestDatabase } from './support/database';
import { NATS_URL, uniqueNamespace, waitFor } from './support/processes';

/**
 * `FrontendModule` compiled in this process with Nest's testing module on Fastify, against real
 * NATS and PostgreSQL: the module graph alone (its APP_FILTERs,
 * guards and providers), without the Fastify hooks `createFrontendApp` adds, serves the contract.
 */
describe('FrontendModule compiled in-process', () => {
  const namespace = uniqueNamespace('inproc');
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let bus: TestBus;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    register.clear();
    bus = await TestBus.connect();
    db = await createTestDatabase('inproc');
    const schema = createThresholdDataSource({ databaseUrl: db.url(), dataDir: '' });
    await schema.initialize();
    await runMigrations(schema);
    await schema.destroy();
    const config = parseFrontendFlags([
      '--nats-url',
      NATS_URL,
      '--namespace',
      namespace,
      '--database-url',
      db.url(),
      '--admission-control',
      'token-capacity',
      '--active-decode-blocks-threshold',
      '0.8',
    ]);
    const moduleRef = await Test.createTestingModule({
      imports: [FrontendModule.forRoot(config)],
    }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter());
    connectMonitor(app);
    await app.init();
    await app.startAllMicroservices();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(async () => {
    await app?.close();
    await bus?.close();
    await db?.drop();
    register.clear();
  });

  const models = async (): Promise<string[]> => {
    const res = await app.inject({ method: 'GET', url: '/v1/models' });
    return res.json<{ data: Array<{ id: string }> }>().data.map((m) => m.id);
  };

  it('hears load reports on NATS and lists the model in GET /v1/models', async () => {
    // Sent again until heard, as a worker's heartbeat would be: a report published before the
    // monitor's subscription has reached the server is lost (seen once in a full suite run).
    await waitFor(async () => {
      bus.report(namespace, {
        worker_id: 'w1',
        endpoint: 'http://127.0.0.1:9',
        active_decode_blocks: 90,
      });
      return (await models()).includes(MODEL);
    }, 'model listed');
  });

  it('answers the overload 503 of docs/api.md#errors through the guard and the 503 filter, and counts it', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      payload: { model: MODEL, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).toBe(OVERLOAD_BODY);
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain(
      `dynamo_frontend_model_rejection_total{model="${MODEL}",endpoint="chat_completions"} 1`,
    );
  });

  it('answers any other error with the contract body through the catch-all filter', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      payload: { model: 'never-seen', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.statusCode).toBe(404);
    expect(res.headers).not.toHaveProperty('retry-after');
    expect(res.body).toBe(
      '{"message":"Model \'never-seen\' not found","type":"not_found","code":404}',
    );
  });

  it('reports its dependencies up on GET /health', async () => {
    const res = await app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok', info: { bus: { status: 'up' } } });
  });
});
