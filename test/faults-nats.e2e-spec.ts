import { connect, NatsConnection } from 'nats';
import { chat, metricValue, OVERLOAD_BODY, post } from './support/http';
import { Heartbeat, health, liveTraffic, NatsServer } from './support/nats-server';
import {
  FrontendProcess,
  spawnApp,
  startFrontend,
  startWorker,
  uniqueNamespace,
  waitFor,
  WorkerProcess,
} from './support/processes';

const TTL_MS = 1500;
const GATE_MODEL = 'faults/gate-model';

/**
 * Issue 6 point 1: the frontend's NATS goes away (the test's own nats-server is SIGKILLed) and
 * comes back on the same port. Two real simulated workers report for themselves on that server;
 * a third, serving GATE_MODEL, has its load published by the test so its busy state is exact.
 */
describe('NATS outage', () => {
  let nats: NatsServer;
  let fe: FrontendProcess;
  const workers: WorkerProcess[] = [];
  let gate: WorkerProcess;
  let beat: Heartbeat | undefined;
  const ns = uniqueNamespace('fnats');
  const ids = ['fn-w1', 'fn-w2'];

  const gateReport = (decode: number) => ({
    worker_id: 'fn-gate',
    model: GATE_MODEL,
    endpoint: gate.url,
    active_decode_blocks: decode,
  });
  const gateChat = () =>
    post(`${fe.url}/v1/chat/completions`, {
      model: GATE_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
    });
  const known = async (id: string) =>
    (await metricValue(fe.url, 'dynamo_frontend_worker_busy', { worker_id: id })) !== undefined;
  const busGauge = () => metricValue(fe.url, 'sluice_frontend_bus_connected');

  const reporting = (id: string) => [
    ...['--nats-url', nats.url, '--namespace', ns, '--worker-id', id],
    ...['--report-interval-ms', '200'],
  ];

  beforeAll(async () => {
    nats = await NatsServer.start();
    [workers[0], workers[1], gate] = await Promise.all([
      startWorker(reporting(ids[0])),
      startWorker(reporting(ids[1])),
      startWorker(['--model', GATE_MODEL]),
    ]);
    fe = await startFrontend(
      [
        ...['--nats-url', nats.url, '--worker-ttl-ms', String(TTL_MS)],
        ...['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.5'],
      ],
      ns,
    );
    beat = await Heartbeat.start(nats.url, ns);
    beat.set(gateReport(90));
    await waitFor(async () => (await known(ids[0])) && (await known(ids[1])), 'workers known');
    await waitFor(async () => (await gateChat()).status === 503, 'gate worker busy');
  });

  afterAll(async () => {
    await beat?.close();
    await Promise.all([fe?.proc.stop(), gate?.proc.stop(), ...workers.map((w) => w.proc.stop())]);
    await nats?.stop();
  });

  it('keeps serving on the last known load while NATS is down, and says so', async () => {
    expect((await health(fe.url)).status).toBe(200);
    expect(await busGauge()).toBe(1);
    await beat?.close();
    beat = undefined;
    const stopTraffic = liveTraffic(fe.url, 4);
    await nats.stop();
    const lost = Date.now();

    const down = await waitFor(async () => {
      const h = await health(fe.url);
      return h.status === 503 ? h : undefined;
    }, '/health 503 after NATS loss');
    expect(Date.now() - lost).toBeLessThan(2000);
    expect(down.body).toMatchObject({ message: 'Not ready', type: 'service_unavailable' });
    expect(down.body.details.error).toEqual({ bus: { status: 'down', state: 'disconnected' } });
    expect(down.body.details.info).toMatchObject({ database: { status: 'up' } });
    expect(await busGauge()).toBe(0);
    expect(fe.proc.output).toMatch(/NATS (disconnected|reconnecting): keeping the last known load/);

    // Silent for three TTLs: the silence is ours, so no worker is forgotten, none misses a request.
    await new Promise((r) => setTimeout(r, 3 * TTL_MS));
    for (const id of [...ids, 'fn-gate']) expect(await known(id)).toBe(true);
    const traffic = await stopTraffic();
    expect(Object.keys(traffic.statuses)).toEqual(['200']);
    expect(traffic.statuses[200]).toBeGreaterThan(100);
    expect([...traffic.servedBy].sort()).toEqual(ids);
    expect(traffic.slowestMs).toBeLessThan(1000);
    // The gate worker is still busy by its last report: the exact overload 503, not "no workers".
    const rejected = await gateChat();
    expect(rejected.status).toBe(503);
    expect(rejected.text).toBe(OVERLOAD_BODY);
    expect((await health(fe.url)).status).toBe(503);
  });

  it('lets a worker restarted during the outage serve at once, on the last known load', async () => {
    // A crash and restart on the same address while NATS is still away: the frontend keeps
    // routing to that address, so the worker must serve before it can report.
    const { url } = workers[1];
    await workers[1].proc.stop('SIGKILL');
    const port = new URL(url).port;
    const proc = spawnApp('worker', ['--port', port, '--speedup', '0', ...reporting(ids[1])]);
    workers[1] = { proc, url, port: Number(port) };
    await waitFor(
      async () => (await fetch(`${url}/v1/models`)).ok,
      'restarted worker serving',
      5000,
    );
    await workers[1].proc.waitForOutput(/NATS at \S+ not reachable yet: serving without/, 1000);
    const served = new Set<string | null>();
    for (let i = 0; i < 8; i++) {
      const res = await chat(fe.url);
      expect(res.status).toBe(200);
      served.add(res.headers.get('x-sluice-worker-id'));
    }
    expect([...served].sort()).toEqual(ids);
  });

  it('reconnects by itself and acts on new reports within 2 s of NATS returning', async () => {
    expect(nats.running).toBe(false);
    await nats.restart();
    const back = Date.now();
    beat = await Heartbeat.start(nats.url, ns);
    beat.set(gateReport(10)); // the gate worker frees up

    await waitFor(async () => (await gateChat()).status === 200, 'gate admitted', 2000, 20);
    const acted = Date.now() - back;
    await waitFor(async () => (await health(fe.url)).status === 200, '/health 200', 2000, 20);
    expect(Date.now() - back).toBeLessThan(2000);
    expect(acted).toBeLessThan(2000);
    expect(await busGauge()).toBe(1);
    expect((await health(fe.url)).body.details.bus).toEqual({ status: 'up', state: 'connected' });
    expect(fe.proc.output).toMatch(/NATS connected: acting on load reports/);
  });

  it('hears the simulated workers again: they reconnect and resume reporting', async () => {
    const watcher: NatsConnection = await connect({ servers: nats.url, name: 'e2e-watch' });
    try {
      const since = Date.now();
      const heard = new Set<string>();
      const sub = watcher.subscribe(`namespace.${ns}.kv_metrics`);
      const done = (async () => {
        for await (const m of sub) {
          const r = JSON.parse(new TextDecoder().decode(m.data)) as {
            worker_id: string;
            timestamp_ms: number;
          };
          if (r.timestamp_ms >= since) heard.add(r.worker_id);
          if (ids.every((id) => heard.has(id))) return;
        }
      })();
      await waitFor(() => ids.every((id) => heard.has(id)), 'fresh reports of both workers', 3000);
      sub.unsubscribe();
      await done;
    } finally {
      await watcher.close();
    }
    await workers[1].proc.waitForOutput(/NATS at \S+ reachable now: publishing load reports/, 1000);
    // Two TTLs after the bus came back they are still live: their reports reach the frontend.
    await new Promise((r) => setTimeout(r, 2 * TTL_MS));
    for (const id of ids) expect(await known(id)).toBe(true);
    expect((await chat(fe.url)).status).toBe(200);
    // Whereas a worker that really went silent is now forgotten, as before the outage.
    await beat?.close();
    beat = undefined;
    await waitFor(async () => !(await known('fn-gate')), 'silent gate worker expired', 3 * TTL_MS);
    const gone = await gateChat();
    expect(gone.status).toBe(503);
    expect(gone.json).toMatchObject({ message: `No workers available for model '${GATE_MODEL}'` });
  });

  it('notices a hung NATS server (SIGSTOP) within the TTL and keeps every worker', async () => {
    nats.pause();
    const hung = Date.now();
    try {
      // No reset arrives: only the client's pings can tell. Before the fix /health stayed 200
      // and every worker expired after the TTL (503 "No workers available").
      await waitFor(async () => (await health(fe.url)).status === 503, '/health 503', TTL_MS, 20);
      expect(Date.now() - hung).toBeLessThan(TTL_MS);
      expect(await busGauge()).toBe(0);
      await new Promise((r) => setTimeout(r, 2 * TTL_MS));
      for (const id of ids) expect(await known(id)).toBe(true);
      expect((await chat(fe.url)).status).toBe(200);
    } finally {
      nats.resume();
    }
    const thawed = Date.now();
    await waitFor(async () => (await health(fe.url)).status === 200, '/health 200', 2000, 20);
    expect(Date.now() - thawed).toBeLessThan(2000);
    await new Promise((r) => setTimeout(r, 2 * TTL_MS));
    for (const id of ids) expect(await known(id)).toBe(true);
  });
});
