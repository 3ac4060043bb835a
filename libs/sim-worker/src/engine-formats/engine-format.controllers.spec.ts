import { Logger } from '@nestjs/common';
import { parseWorkerFlags } from '../config/worker-flags.parser';
import { createWorkerApp, WorkerApp } from '../worker-app.factory';
import { PROMETHEUS_CONTENT_TYPE } from './prometheus-text.writer';
import { SglangLoads } from './sglang-loads.format';

/** Generous: the point is that the value gets there, not how fast. */
const DEADLINE_MS = 20_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` until `done` holds for what it returned; fails with the last value otherwise. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(value)}`);
    await sleep(20);
  }
}

/** Opens a long chat stream and waits for its headers; aborting it cancels the sequence. */
async function openStream(worker: WorkerApp): Promise<AbortController> {
  const abort = new AbortController();
  const res = await fetch(`${worker.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      messages: [{ role: 'user', content: 'Tell me about sluice gates.' }],
      max_tokens: 2000,
      stream: true,
    }),
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  return abort;
}

/** `{engine: value}` of one vLLM gauge, read from the text a scrape returns. */
function perEngine(text: string, name: string): Record<string, number> {
  const values: Record<string, number> = {};
  const line = new RegExp(`^${name}\\{engine="(\\d+)",model_name="[^"]*"\\} (\\S+)$`, 'gm');
  for (const [, engine, value] of text.matchAll(line)) values[engine] = Number(value);
  return values;
}

const sum = (values: Record<string, number>): number =>
  Object.values(values).reduce((total, value) => total + value, 0);

describe('engine metric formats served by a real worker (speedup 1)', () => {
  let worker: WorkerApp;

  beforeAll(() => {
    Logger.overrideLogger(['error']);
  });

  afterEach(() => worker.close());

  it('serves vLLM /metrics from the live engine: load rises, requests queue, all falls back', async () => {
    // Each stream reserves up to ~126 of a rank's 200 blocks: one runs per rank, the third waits.
    const argv = ['--port', '0', '--dp-size', '2', '--kv-total-blocks', '200'];
    worker = await createWorkerApp(parseWorkerFlags([...argv, '--metrics-format', 'vllm']), null);
    const scrape = async () => {
      const res = await fetch(`${worker.url}/metrics`);
      expect(res.headers.get('content-type')).toBe(PROMETHEUS_CONTENT_TYPE);
      const text = await res.text();
      return {
        running: perEngine(text, 'vllm:num_requests_running'),
        waiting: perEngine(text, 'vllm:num_requests_waiting'),
        usage: perEngine(text, 'vllm:kv_cache_usage_perc'),
      };
    };
    expect(await scrape()).toEqual({
      running: { 0: 0, 1: 0 },
      waiting: { 0: 0, 1: 0 },
      usage: { 0: 0, 1: 0 },
    });

    const streams = [await openStream(worker), await openStream(worker), await openStream(worker)];
    const busy = await eventually(scrape, (s) => sum(s.running) === 2 && sum(s.waiting) === 1);
    expect(busy.running).toEqual({ 0: 1, 1: 1 });
    expect(busy.usage[0]).toBeGreaterThan(0);
    expect(busy.usage[1]).toBeGreaterThan(0);

    streams.forEach((stream) => stream.abort());
    await eventually(scrape, (s) => sum(s.running) + sum(s.waiting) + sum(s.usage) === 0);
    expect((await fetch(`${worker.url}/v1/loads`)).status).toBe(404);
  });

  it('answers /metrics?name[]= with the whole exposition, as vLLM does, unless told to honour it', async () => {
    const sampleNames = async (query: string): Promise<string[]> => {
      const text = await (await fetch(`${worker.url}/metrics${query}`)).text();
      const names = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
      return [...new Set(names.map((l) => l.replace(/[{ ].*$/, '')))];
    };
    const two = '?name[]=vllm:kv_cache_usage_perc&name%5B%5D=vllm%3Acache_config_info';
    const argv = ['--port', '0', '--dp-size', '2', '--metrics-format', 'vllm'];
    worker = await createWorkerApp(parseWorkerFlags(argv), null);
    const everything = await sampleNames('');
    expect(everything.length).toBeGreaterThan(5);
    expect(await sampleNames(two)).toEqual(everything);
    await worker.close();

    worker = await createWorkerApp(parseWorkerFlags([...argv, '--honour-name-filter']), null);
    expect(await sampleNames(two)).toEqual(['vllm:kv_cache_usage_perc', 'vllm:cache_config_info']);
    expect(await sampleNames('?name[]=vllm:num_requests_waiting')).toEqual([
      'vllm:num_requests_waiting',
    ]);
    expect(await sampleNames('?name[]=no_such_metric')).toEqual([]);
    expect(await sampleNames('')).toEqual(everything);
  });

  it("serves SGLang's /v1/loads, /server_info and /metrics from the live engine", async () => {
    const argv = ['--port', '0', '--dp-size', '2', '--block-size', '32', '--model', 'm-sg'];
    worker = await createWorkerApp(parseWorkerFlags([...argv, '--metrics-format', 'sglang']), null);
    const loads = async () => {
      const res = await fetch(`${worker.url}/v1/loads`);
      return ((await res.json()) as SglangLoads).loads;
    };
    const info = (await (await fetch(`${worker.url}/server_info`)).json()) as object;
    expect(info).toMatchObject({
      served_model_name: 'm-sg',
      page_size: 32,
      max_total_num_tokens: 16384 * 32,
      dp_size: 2,
    });
    expect((await loads()).map((l) => [l.dp_rank, l.num_running_reqs, l.token_usage])).toEqual([
      [0, 0, 0],
      [1, 0, 0],
    ]);

    const stream = await openStream(worker);
    const busy = await eventually(loads, (all) => all.some((l) => l.num_running_reqs === 1));
    const rank = busy.find((l) => l.num_running_reqs === 1)!;
    expect(rank.token_usage).toBeGreaterThan(0);
    expect(rank.num_used_tokens % 32).toBe(0);
    expect(rank.num_used_tokens / rank.max_total_num_tokens).toBeCloseTo(rank.token_usage, 12);
    // /metrics follows when the scheduler next writes its gauges (at a step, not when asked).
    const running = new RegExp(
      `^sglang:num_running_reqs\\{dp_rank="${rank.dp_rank}",[^}]*\\} 1\\.0$`,
      'm',
    );
    const metricsText = async () => (await fetch(`${worker.url}/metrics`)).text();
    await eventually(metricsText, (text) => running.test(text));

    const one = await fetch(`${worker.url}/v1/loads?dp_rank=${rank.dp_rank}`);
    expect(((await one.json()) as SglangLoads).loads.map((l) => l.dp_rank)).toEqual([rank.dp_rank]);
    expect((await fetch(`${worker.url}/v1/loads?dp_rank=first`)).status).toBe(400);

    stream.abort();
    await eventually(loads, (all) =>
      all.every((l) => l.num_total_reqs === 0 && l.token_usage === 0),
    );
    // /metrics keeps the gauges the scheduler last wrote: SGLang writes them again only after
    // 30 s of idleness. Its exporter answers a name filter with nothing.
    expect(await metricsText()).toMatch(running);
    const filtered = await fetch(`${worker.url}/metrics?name[]=sglang:num_running_reqs`);
    expect(filtered.status).toBe(200);
    expect(await filtered.text()).toBe('');
  });

  it('serves none of these routes without --metrics-format', async () => {
    worker = await createWorkerApp(parseWorkerFlags(['--port', '0']), null);
    for (const path of ['/metrics', '/v1/loads', '/server_info']) {
      expect((await fetch(`${worker.url}${path}`)).status).toBe(404);
    }
  });
});
