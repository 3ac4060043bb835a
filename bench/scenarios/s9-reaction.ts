import { FakeEngine, ProcessGroup, startBridge, startEmbedded } from '@sluice/testkit';
import { BenchContext, CPU } from '../lib/context';
import { chatBody, httpGet, isOverload, MODEL, PacedProber } from '../lib/http';
import { DECODE_SHEDDING, startFrontend } from '../lib/sluice';
import { vllmMetricsText } from '../lib/vllm-metrics';
import { nowNs, sleep, uniqueNamespace, waitFor } from '../lib/util';
import { INTERVAL_MS } from './s9-scrape-cost';

const PATH = '/v1/chat/completions';
const GPU_BLOCKS = 2048;
/** What the fake engine answers an admitted request (the frontend forwards it there). */
const COMPLETION = {
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1764590000,
  model: MODEL,
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'length' }],
  usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 },
};

export interface Reaction {
  label: string;
  /** Flip over the threshold → first 503, and back under → first 200 (ms). */
  up: number[];
  down: number[];
  /** Of those: flip → the engine's next /metrics request (the wait for the next scrape). */
  upWait: number[];
  downWait: number[];
}

const body = (kvUsage: number): string =>
  vllmMetricsText({ model: MODEL, kvUsage, numGpuBlocks: GPU_BLOCKS, running: 3, seed: 1 });
const UNDER = body(0.1);
const OVER = body(0.9);

/** ns from `t0` to the engine's next /metrics request, polled every millisecond. */
function nextScrape(engine: FakeEngine, t0: number, timeoutMs: number): Promise<number | null> {
  const before = engine.requests('/metrics');
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const t = nowNs();
      if (engine.requests('/metrics') !== before) resolve(t - t0);
      else if (t - t0 < timeoutMs * 1e6) return;
      else resolve(null);
      clearInterval(timer);
    }, 1);
  });
}

/** Trials of flipping the engine's /metrics over 0.85 and back, probing the frontend at 1 kHz. */
async function trials(
  ctx: BenchContext,
  label: string,
  fe: string,
  engine: FakeEngine,
): Promise<Reaction> {
  const probe = new PacedProber(fe, PATH, chatBody(MODEL, 1));
  const r: Reaction = { label, up: [], down: [], upWait: [], downWait: [] };
  try {
    engine.set('/metrics', UNDER);
    await probe.until((s) => s === 200, nowNs(), 30000);
    const n = ctx.quick ? 5 : 50;
    const flip = async (
      metricsBody: string,
      done: (s: number, t: string) => boolean,
      into: number[],
      waits: number[],
    ): Promise<void> => {
      // A random phase against the bridge's scrape timer, so each flip lands anywhere in it.
      await sleep(5 + Math.random() * INTERVAL_MS);
      const t0 = nowNs();
      engine.set('/metrics', metricsBody);
      const wait = nextScrape(engine, t0, 5000);
      into.push((await probe.until(done, t0, 5000)).ns / 1e6);
      const w = await wait;
      if (w !== null) waits.push(w / 1e6);
    };
    for (let i = 0; i < n; i++) {
      await flip(OVER, isOverload, r.up, r.upWait);
      await flip(UNDER, (s) => s === 200, r.down, r.downWait);
    }
    return r;
  } finally {
    await probe.close();
  }
}

async function startEngine(): Promise<FakeEngine> {
  return FakeEngine.start({ '/metrics': UNDER, [PATH]: COMPLETION });
}

/** (a) The bridge inside the frontend: the embedded app (`npm start`), in-process bus, no NATS. */
async function inProcess(ctx: BenchContext, g: ProcessGroup): Promise<Reaction> {
  const engine = await startEngine();
  try {
    const { url } = await startEmbedded({
      group: g,
      cpu: CPU.server,
      flags: [
        ...['--database-url', ctx.databaseUrl, '--engine-target', `vllm=probe=${engine.url}`],
        ...DECODE_SHEDDING,
      ],
      ready: /sluice: ready at .* engines scraped in-process/,
    });
    await waitFor(async () => (await httpGet(`${url}/health`)).status === 200, `${url}/health`);
    return await trials(
      ctx,
      'in-process bridge (`--engine-target`, embedded app, no NATS)',
      url,
      engine,
    );
  } finally {
    await engine.close();
  }
}

/** (b) The standalone bridge publishing on NATS to a frontend. */
async function standalone(ctx: BenchContext, g: ProcessGroup): Promise<Reaction> {
  const engine = await startEngine();
  try {
    const ns = uniqueNamespace('s9r');
    const fe = await startFrontend(g, {
      natsUrl: ctx.natsUrl,
      databaseUrl: ctx.databaseUrl,
      namespace: ns,
      cpu: CPU.server,
      flags: DECODE_SHEDDING,
    });
    await startBridge({
      ...{ group: g, cpu: CPU.server, natsUrl: ctx.natsUrl, namespace: ns },
      flags: ['--engine', 'vllm', '--target', `probe=${engine.url}`],
    });
    return await trials(ctx, 'standalone bridge → NATS → frontend', fe.url, engine);
  } finally {
    await engine.close();
  }
}

/** Part 2 of scenario 9: engine load crossing the threshold → first 503, both deployments. */
export async function measureReactions(ctx: BenchContext): Promise<Reaction[]> {
  const out: Reaction[] = [];
  for (const run of [inProcess, standalone]) {
    const g = ctx.group();
    try {
      out.push(await run(ctx, g));
    } finally {
      await g.stopAll();
    }
  }
  return out;
}
