import { connect, NatsConnection } from 'nats';
import { useSystem } from './support/fixtures';
import { chat, metricValue, OVERLOAD_BODY, post } from './support/http';
import { Heartbeat, health, liveTraffic, NatsServer } from './support/nats-server';
import { waitFor } from './support/processes';

const TTL_MS = 1500;
const GATE_MODEL = 'faults/gate-model';
/** Generous: how soon things happen is the bench's business; here only that they do. */
const DEADLINE_MS = 30_000;

/**
 * Issue 6 point 1: the frontend's NATS goes away (the test's own nats-server is SIGKILLed) and
 * comes back on the same port. Two real simulated workers report for themselves on that server;
 * a third, serving GATE_MODEL, has its load published by the test so its busy state is exact.
 * Every test starts from the same state (NATS up, every worker known, the gate worker busy)
 * and causes its own outage.
 */
describe('NATS outage', () => {
  let nats: NatsServer;
  let beat: Heartbeat | undefined;
  const ids = ['fn-w1', 'fn-w2'];

  beforeAll(async () => {
    nats = await NatsServer.start();
  });
  afterAll(() => nats?.stop());

  const reporting = (id: string) => [
    ...['--nats-url', nats.url, '--namespace', sys.namespace, '--worker-id', id],
    ...['--report-interval-ms', '200'],
  ];
  const sys = useSystem({
    workers: () => [reporting(ids[0]), reporting(ids[1]), ['--model', GATE_MODEL]],
    frontend: () => [
      ...['--nats-url', nats.url, '--worker-ttl-ms', String(TTL_MS)],
      ...['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.5'],
    ],
  });

  const gateReport = (decode: number) => ({
    worker_id: 'fn-gate',
    model: GATE_MODEL,
    endpoint: sys.workers[2].url,
    active_decode_blocks: decode,
  });
  const gateChat = () =>
    post(`${sys.fe.url}/v1/chat/completions`, {
      model: GATE_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
    });
  const known = async (id: string) =>
    (await metricValue(sys.fe.url, 'dynamo_frontend_worker_busy', { worker_id: id })) !== undefined;
  const busGauge = () => metricValue(sys.fe.url, 'sluice_frontend_bus_connected');
  /** The test's reports stop: its connection does not reconnect after an outage anyway. */
  const silenceGate = async () => {
    await beat?.close();
    beat = undefined;
  };

  beforeEach(async () => {
    await nats.restart();
    beat = await Heartbeat.start(nats.url, sys.namespace);
    beat.set(gateReport(90));
    await waitFor(async () => (await health(sys.fe.url)).status === 200, 'NATS up', DEADLINE_MS);
    await waitFor(
      async () => (await known(ids[0])) && (await known(ids[1])),
      'workers known',
      DEADLINE_MS,
    );
    await waitFor(async () => (await gateChat()).status === 503, 'gate worker busy', DEADLINE_MS);
  });
  afterEach(silenceGate);

  /** NATS goes away; resolves once the frontend says so on /health. */
  async function outage() {
    await silenceGate();
    await nats.stop();
    return waitFor(
      async () => {
        const h = await health(sys.fe.url);
        return h.status === 503 ? h : undefined;
      },
      '/health 503 after NATS loss',
      DEADLINE_MS,
    );
  }

  it('keeps serving on the last known load while NATS is down, and says so', async () => {
    expect(await busGauge()).toBe(1);
    const stopTraffic = liveTraffic(sys.fe.url, 4);
    const down = await outage();
    expect(down.body).toMatchObject({ message: 'Not ready', type: 'service_unavailable' });
    expect(down.body.details.error).toEqual({ bus: { status: 'down', state: 'disconnected' } });
    expect(down.body.details.info).toMatchObject({ database: { status: 'up' } });
    expect(await busGauge()).toBe(0);
    // The log line reaches us through a pipe, which may lag /health's answer on a busy machine.
    await sys.fe.proc.waitForOutput(
      /NATS (disconnected|reconnecting): keeping the last known load/,
      DEADLINE_MS,
    );

    // Silent for three TTLs: the silence is ours, so no worker is forgotten, none misses a request.
    await new Promise((r) => setTimeout(r, 3 * TTL_MS));
    for (const id of [...ids, 'fn-gate']) expect(await known(id)).toBe(true);
    const traffic = await stopTraffic();
    expect(Object.keys(traffic.statuses)).toEqual(['200']);
    expect(traffic.statuses[200]).toBeGreaterThan(100);
    expect([...traffic.servedBy].sort()).toEqual(ids);
    // The gate worker is still busy by its last report: the exact overload 503, not "no workers".
    const rejected = await gateChat();
    expect(rejected.status).toBe(503);
    expect(rejected.text).toBe(OVERLOAD_BODY);
    expect((await health(sys.fe.url)).status).toBe(503);
  });

  it('lets a worker restarted during the outage serve at once, on the last known load', async () => {
    await outage();
    // A crash and restart on the same address while NATS is still away: the frontend keeps
    // routing to that address, so the worker must serve before it can report.
    const { url } = sys.workers[1];
    await sys.workers[1].proc.stop('SIGKILL');
    const port = new URL(url).port;
    const args = ['--host', '127.0.0.1', '--port', port, '--speedup', '0', ...reporting(ids[1])];
    sys.workers[1] = { ...sys.workers[1], proc: sys.group.app('worker', args) };
    await waitFor(
      async () => (await fetch(`${url}/v1/models`)).ok,
      'restarted worker serving',
      DEADLINE_MS,
    );
    await sys.workers[1].proc.waitForOutput(/NATS at \S+ not reachable yet: serving without/);
    const served = new Set<string | null>();
    for (let i = 0; i < 8; i++) {
      const res = await chat(sys.fe.url);
      expect(res.status).toBe(200);
      served.add(res.headers.get('x-sluice-worker-id'));
    }
    expect([...served].sort()).toEqual(ids);
  });

  it('reconnects by itself and acts on new reports once NATS returns', async () => {
    await outage();
    await nats.restart();
    beat = await Heartbeat.start(nats.url, sys.namespace);
    beat.set(gateReport(10)); // the gate worker frees up

    await waitFor(async () => (await gateChat()).status === 200, 'gate admitted', DEADLINE_MS);
    await waitFor(
      async () => (await health(sys.fe.url)).status === 200,
      '/health 200',
      DEADLINE_MS,
    );
    expect(await busGauge()).toBe(1);
    expect((await health(sys.fe.url)).body.details.bus).toEqual({
      status: 'up',
      state: 'connected',
    });
    expect(sys.fe.proc.output).toMatch(/NATS connected: acting on load reports/);
  });

  it('hears the simulated workers again: they reconnect and resume reporting', async () => {
    await outage();
    await nats.restart();
    const watcher: NatsConnection = await connect({ servers: nats.url, name: 'e2e-watch' });
    try {
      const since = Date.now();
      const heard = new Set<string>();
      const sub = watcher.subscribe(`namespace.${sys.namespace}.kv_metrics`);
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
      await waitFor(() => ids.every((id) => heard.has(id)), 'fresh reports', DEADLINE_MS);
      sub.unsubscribe();
      await done;
    } finally {
      await watcher.close();
    }
    await sys.workers[1].proc.waitForOutput(/NATS at \S+ reachable now: publishing load reports/);
    await waitFor(
      async () => (await health(sys.fe.url)).status === 200,
      '/health 200',
      DEADLINE_MS,
    );
    // Two TTLs after the bus came back they are still live: their reports reach the frontend.
    await new Promise((r) => setTimeout(r, 2 * TTL_MS));
    for (const id of ids) expect(await known(id)).toBe(true);
    expect((await chat(sys.fe.url)).status).toBe(200);
    // Whereas a worker that really went silent (the test stopped reporting for the gate worker
    // when NATS went away) is now forgotten, as before the outage.
    await waitFor(async () => !(await known('fn-gate')), 'silent gate worker expired', DEADLINE_MS);
    const gone = await gateChat();
    expect(gone.status).toBe(503);
    expect(gone.json).toMatchObject({ message: `No workers available for model '${GATE_MODEL}'` });
  });

  it('notices a hung NATS server (SIGSTOP) and keeps every worker', async () => {
    nats.pause();
    try {
      // No reset arrives: only the client's pings can tell. Before the fix /health stayed 200
      // and every worker expired after the TTL (503 "No workers available").
      await waitFor(
        async () => (await health(sys.fe.url)).status === 503,
        '/health 503',
        DEADLINE_MS,
      );
      expect(await busGauge()).toBe(0);
      await new Promise((r) => setTimeout(r, 2 * TTL_MS));
      for (const id of ids) expect(await known(id)).toBe(true);
      expect((await chat(sys.fe.url)).status).toBe(200);
    } finally {
      nats.resume();
    }
    await waitFor(
      async () => (await health(sys.fe.url)).status === 200,
      '/health 200',
      DEADLINE_MS,
    );
    await new Promise((r) => setTimeout(r, 2 * TTL_MS));
    for (const id of ids) expect(await known(id)).toBe(true);
  });
});
