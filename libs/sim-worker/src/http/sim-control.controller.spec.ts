import { Logger } from '@nestjs/common';
import { parseWorkerFlags } from '../config/worker-flags.parser';
import { createWorkerApp, WorkerApp } from '../worker-app.factory';

describe('PUT /sim/speedup (the simulated worker only)', () => {
  let worker: WorkerApp;

  const put = (body: unknown) =>
    fetch(`${worker.url}/sim/speedup`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    worker = await createWorkerApp(parseWorkerFlags(['--port', '0', '--speedup', '3']), null);
  });
  afterAll(() => worker.close());

  it('reads and changes the speed the worker started with', async () => {
    expect(await (await fetch(`${worker.url}/sim/speedup`)).json()).toEqual({ speedup: 3 });
    const changed = await put({ speedup: 0.25 });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toEqual({ speedup: 0.25 });
    expect(await (await fetch(`${worker.url}/sim/speedup`)).json()).toEqual({ speedup: 0.25 });
  });

  it.each([{ speedup: -1 }, { speedup: '2' }, {}, [1]])(
    'refuses %p with a 400 naming the field, and keeps the speed',
    async (body) => {
      await put({ speedup: 2 });
      const refused = await put(body);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ type: 'invalid_request_error' });
      expect(await (await fetch(`${worker.url}/sim/speedup`)).json()).toEqual({ speedup: 2 });
    },
  );
});
