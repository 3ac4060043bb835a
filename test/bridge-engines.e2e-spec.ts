import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, NatsConnection, Subscription } from 'nats';
import { parseKvMetricsReport } from '@sluice/contracts';
import { FakeEngine, HANG, huge, metricSamples, sleep, Started } from '@sluice/testkit';
import { useProcesses } from './support/fixtures';
import { rssMiB } from './support/proc';
import { quietPort, NATS_URL, startBridge, uniqueNamespace, waitFor } from './support/processes';

const FIXTURES = join(__dirname, 'fixtures', 'engines');
const fixture = (engine: string, name: string): string =>
  readFileSync(join(FIXTURES, engine, name), 'utf8');
const json = (engine: string, name: string): object => JSON.parse(fixture(engine, name)) as object;

type Message = { subject: string; payload: Record<string, unknown>; at: number };

/** Every message of a namespace, as the frontend would receive it. */
class NatsRecorder {
  readonly messages: Message[] = [];
  private constructor(
    private readonly nc: NatsConnection,
    private readonly sub: Subscription,
    readonly namespace: string,
  ) {
    void (async () => {
      for await (const m of sub) {
        this.messages.push({ subject: m.subject, payload: m.json(), at: Date.now() });
      }
    })();
  }

  static async start(namespace = uniqueNamespace('br')): Promise<NatsRecorder> {
    const nc = await connect({ servers: NATS_URL, name: 'bridge-e2e' });
    const sub = nc.subscribe(`namespace.${namespace}.>`);
    await nc.flush();
    return new NatsRecorder(nc, sub, namespace);
  }

  reports(workerId: string): Record<string, unknown>[] {
    return this.of('kv_metrics', workerId).map((m) => m.payload);
  }

  downs(workerId: string): Message[] {
    return this.of('worker_down', workerId);
  }

  private of(event: string, workerId: string): Message[] {
    const subject = `namespace.${this.namespace}.${event}`;
    return this.messages.filter((m) => m.subject === subject && m.payload.worker_id === workerId);
  }

  async close(): Promise<void> {
    this.sub.unsubscribe();
    await this.nc.drain();
  }
}

async function scrapes(bridge: Started, workerId: string, result: string): Promise<number> {
  const text = await (await fetch(`${bridge.url}/metrics`)).text();
  return (
    metricSamples(text, 'sluice_bridge_scrapes_total', { worker_id: workerId, result })[0] ?? 0
  );
}

const llamacppRoutes = () => ({
  '/props': json('llamacpp', '0.7.0/props.json'),
  '/slots': JSON.parse(fixture('llamacpp', '0.7.0/slots-busy.json')) as object,
  '/metrics': fixture('llamacpp', '0.7.0/metrics-busy.txt'),
});

async function gapValue(bridge: Started, workerId: string, gap: string): Promise<number> {
  const text = await (await fetch(`${bridge.url}/metrics`)).text();
  return metricSamples(text, 'sluice_bridge_signal_gap', { worker_id: workerId, gap })[0] ?? -1;
}

async function healthOf(bridge: Started, workerId: string): Promise<Record<string, unknown>> {
  const body = (await (await fetch(`${bridge.url}/health`)).json()) as {
    workers: Record<string, unknown>[];
  };
  return body.workers.find((w) => w.workerId === workerId) ?? {};
}

const tgiRoutes = () => ({
  '/info': json('tgi', 'info.json'),
  '/metrics': fixture('tgi', 'metrics.txt'),
});

describe('engine bridge against real NATS (docs/engines.md)', () => {
  let recorder: NatsRecorder;
  const engines: FakeEngine[] = [];
  const bridges = useProcesses('each');

  beforeEach(async () => {
    recorder = await NatsRecorder.start();
  });

  afterEach(async () => {
    for (const e of engines.splice(0)) await e.close();
    await recorder.close();
  });

  async function engine(routes: Record<string, string | object>): Promise<FakeEngine> {
    const e = await FakeEngine.start(routes);
    engines.push(e);
    return e;
  }

  const bridge = (flags: string[]): Promise<Started> =>
    startBridge({ natsUrl: NATS_URL, namespace: recorder.namespace, flags, group: bridges });

  it('publishes llama.cpp slots as reports, following the engine as it changes', async () => {
    const llama = await engine(llamacppRoutes());
    await bridge([
      '--engine',
      'llamacpp',
      '--target',
      llama.url,
      '--scrape-interval-ms',
      '100',
      '--max-num-batched-tokens',
      '4096',
    ]);
    const first = await waitFor(() => recorder.reports(llama.hostPort)[0], 'a llama.cpp report');
    expect(parseKvMetricsReport(first).ok).toBe(true);
    expect(first).toMatchObject({
      worker_id: llama.hostPort,
      model: 'tiny',
      endpoint: llama.url,
      dp_rank: 0,
      dp_size: 1,
      kv_total_blocks: 4,
      active_decode_blocks: 4,
      kv_block_size: 2048,
      num_requests_waiting: 2,
      max_num_batched_tokens: 4096,
      seq: 0,
    });
    expect(first.source).toMatch(/^bridge llamacpp \S+:\d+$/);
    expect(typeof first.timestamp_ms).toBe('number');
    expect(first).not.toHaveProperty('active_prefill_tokens');

    llama.set(
      '/slots',
      [0, 1, 2, 3].map((id) => ({ id, is_processing: false })),
    );
    llama.set(
      '/metrics',
      fixture('llamacpp', '0.7.0/metrics-busy.txt').replace(
        'requests_deferred 2',
        'requests_deferred 0',
      ),
    );
    const idle = await waitFor(
      () => recorder.reports(llama.hostPort).find((r) => r.active_decode_blocks === 0),
      'a report of the idle engine',
    );
    expect(idle).toMatchObject({ kv_total_blocks: 4, num_requests_waiting: 0 });
    const seqs = recorder.reports(llama.hostPort).map((r) => r.seq as number);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it('publishes TGI batch tokens as reports under the NAME given with the target', async () => {
    const tgi = await engine(tgiRoutes());
    await bridge([
      '--engine',
      'tgi',
      '--target',
      `tgi-1=${tgi.url}`,
      '--scrape-interval-ms',
      '100',
    ]);
    const report = await waitFor(() => recorder.reports('tgi-1')[0], 'a TGI report');
    expect(parseKvMetricsReport(report).ok).toBe(true);
    expect(report).toMatchObject({
      worker_id: 'tgi-1',
      model: 'mistralai/Mistral-7B-Instruct-v0.3',
      endpoint: tgi.url,
      dp_rank: 0,
      dp_size: 1,
      kv_total_blocks: 48512,
      active_decode_blocks: 36384,
      num_requests_waiting: 3,
    });
    expect(report).not.toHaveProperty('max_num_batched_tokens');
  });

  it('publishes vLLM 0.8 V1 (whole exposition, num_gpu_blocks "None") with 0 KV blocks and its queue, and says why once', async () => {
    // The fake engine ignores the query string, as vLLM's API server does with ?name[]=.
    const vllm = await engine({ '/metrics': fixture('vllm', 'metrics-v0.8-v1.txt') });
    const b = await bridge([
      '--engine',
      'vllm',
      '--target',
      `v08=${vllm.url}`,
      '--scrape-interval-ms',
      '100',
    ]);
    await waitFor(() => recorder.reports('v08').length >= 5, 'five reports of the 0.8 engine');
    const report = recorder.reports('v08')[0];
    expect(parseKvMetricsReport(report).ok).toBe(true);
    expect(report).toMatchObject({
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      kv_total_blocks: 0,
      active_decode_blocks: 0,
      num_requests_waiting: 2,
    });
    expect(await gapValue(b, 'v08', 'kv_blocks')).toBe(1);
    expect(await gapValue(b, 'v08', 'freshness')).toBe(0);
    expect(await healthOf(b, 'v08')).toMatchObject({
      up: true,
      signalGaps: [{ gap: 'kv_blocks', reason: expect.stringContaining('num_gpu_blocks') }],
    });
    expect(b.proc.output.match(/worker v08 .*cannot tell its kv_blocks/g)).toHaveLength(1);
  });

  it('flags an SGLang read from /metrics (no /v1/loads): its gauges carry no time and may be 30 s old', async () => {
    const sglang = await engine({ '/metrics': fixture('sglang', 'metrics-dp2.txt') });
    const b = await bridge([
      '--engine',
      'sglang',
      '--target',
      `sg=${sglang.url}`,
      '--scrape-interval-ms',
      '100',
    ]);
    await waitFor(() => recorder.reports('sg').length >= 2, 'reports of both ranks');
    const [rank0] = recorder.reports('sg');
    expect(rank0).toMatchObject({
      dp_size: 2,
      active_decode_blocks: 21504,
      num_requests_waiting: 2,
    });
    expect(await gapValue(b, 'sg', 'freshness')).toBe(1);
    expect(await healthOf(b, 'sg')).toMatchObject({
      signalGaps: [{ gap: 'freshness', reason: expect.stringContaining('30 s') }],
    });
  });

  it('publishes worker_down once when an engine goes away, and reports again when it is back', async () => {
    const llama = await engine(llamacppRoutes());
    await bridge([
      '--engine',
      'llamacpp',
      '--target',
      llama.url,
      '--scrape-interval-ms',
      '100',
      '--scrape-timeout-ms',
      '300',
      '--down-after-ms',
      '1000',
    ]);
    await waitFor(() => recorder.reports(llama.hostPort).length > 0, 'first report');
    const wentAway = Date.now();
    await llama.goAway();
    const down = await waitFor(() => recorder.downs(llama.hostPort)[0], 'worker_down', 15000);
    expect(down.at - wentAway).toBeGreaterThanOrEqual(900);
    const reportsWhileDown = recorder.reports(llama.hostPort).length;
    const lastSeq = recorder.reports(llama.hostPort).at(-1)?.seq as number;

    await sleep(1500);
    expect(recorder.downs(llama.hostPort)).toHaveLength(1);
    await llama.comeBack();
    const back = await waitFor(
      () => recorder.reports(llama.hostPort).slice(reportsWhileDown)[0],
      'a report after the engine came back',
      15000,
    );
    expect(back.seq as number).toBeGreaterThan(lastSeq);
    expect(recorder.downs(llama.hostPort)).toHaveLength(1);
  });

  it('survives hostile engines: each failure counted by result, a healthy target keeps reporting, memory bounded', async () => {
    const hostile = await engine(tgiRoutes());
    const healthy = await engine(tgiRoutes());
    const refused = `127.0.0.1:${await quietPort()}`;
    const b = await bridge([
      '--engine',
      'tgi',
      '--target',
      `hostile=${hostile.url}`,
      '--target',
      `healthy=${healthy.url}`,
      '--target',
      `refused=http://${refused}`,
      '--scrape-interval-ms',
      '50',
      '--scrape-timeout-ms',
      '500',
    ]);
    await waitFor(
      () => recorder.reports('healthy').length > 0 && recorder.reports('hostile').length > 0,
      'reports from both',
    );
    await waitFor(
      async () => (await scrapes(b, 'refused', 'error')) > 0,
      'connection refused counted as error',
    );
    const baseline = rssMiB(b.proc.child.pid as number);
    let peak = baseline;

    const healthyKeepsReporting = async (what: string): Promise<void> => {
      const n = recorder.reports('healthy').length;
      await waitFor(
        () => recorder.reports('healthy').length > n + 2,
        `healthy reports during ${what}`,
      );
      peak = Math.max(peak, rssMiB(b.proc.child.pid as number));
    };
    const phase = async (
      what: string,
      route: string | object,
      result: string,
      times = 3,
    ): Promise<void> => {
      hostile.set('/metrics', route);
      const before = await scrapes(b, 'hostile', result);
      await waitFor(
        async () => (await scrapes(b, 'hostile', result)) >= before + times,
        `${what} counted as ${result}`,
        20000,
      );
      await healthyKeepsReporting(what);
    };

    await phase('a 10 MB /metrics', huge(10 * 1024 * 1024), 'unparsable', 10);
    const valid = fixture('tgi', 'metrics.txt');
    await phase(
      'malformed lines of a wanted family',
      `${valid}tgi_queue_size{x="1" 4\n`,
      'unparsable',
    );
    await phase('malformed lines of other families', `garbage{{{\nfoo{a="b" 1\n${valid}`, 'ok');
    await phase('a hanging answer', HANG, 'timeout');
    await phase(
      'NaN values',
      valid.replace('tgi_queue_size 3', 'tgi_queue_size NaN'),
      'unparsable',
    );
    await phase(
      'negative values',
      valid.replace('tgi_batch_current_max_tokens 36384', 'tgi_batch_current_max_tokens -4'),
      'unparsable',
    );

    const hostileReports = recorder.reports('hostile');
    for (const r of hostileReports) expect(parseKvMetricsReport(r).ok).toBe(true);
    expect(hostileReports.every((r) => r.num_requests_waiting === 3)).toBe(true);
    expect(peak - baseline).toBeLessThan(200);
    expect(b.proc.output).not.toMatch(/unhandled|UnhandledPromiseRejection|TypeError/i);
  });
});
