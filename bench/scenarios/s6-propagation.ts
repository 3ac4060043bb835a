import { Heartbeat, ReportBus } from '../lib/bus';
import { BenchContext, CPU, Scenario, ScenarioResult } from '../lib/context';
import { chatBody, httpPost, isOverload, PacedProber } from '../lib/http';
import { startFrontend, startWorker } from '../lib/sluice';
import { fmt, median, nowNs, sleep, uniqueNamespace } from '../lib/util';
import { trialFigure, trialRow } from './s5-reaction';

const PATH = '/v1/chat/completions';
/** A model of its own, so the stored thresholds never touch another scenario. */
const MODEL = 'bench/s6-propagation';

/** Scenario 6: POST /busy_threshold on replica A until the change decides requests on replica B. */
export const propagationScenario: Scenario = {
  id: 6,
  title: 'Threshold propagation between replicas',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const g = ctx.group();
    const ns = uniqueNamespace('s6');
    const bus = await ReportBus.connect(ctx.natsUrl, ns);
    const hb = new Heartbeat(bus);
    let prober: PacedProber | null = null;
    try {
      const worker = await startWorker(g, ['--speedup', '0', '--model', MODEL], {
        cpu: CPU.client,
      });
      const common = {
        natsUrl: ctx.natsUrl,
        databaseUrl: ctx.databaseUrl,
        namespace: ns,
        flags: ['--admission-control', 'token-capacity'],
      };
      const a = await startFrontend(g, { ...common, name: 'frontend-A', cpu: CPU.client });
      const b = await startFrontend(g, { ...common, name: 'frontend-B', cpu: CPU.server });
      hb.set({ worker_id: 's6-1', model: MODEL, endpoint: worker.url, active_decode_blocks: 50 });
      const set = async (t: number | null): Promise<number> => {
        const t0 = nowNs();
        const res = await httpPost(
          `${a.url}/busy_threshold`,
          JSON.stringify({ model: MODEL, active_decode_blocks_threshold: t }),
        );
        if (res.status !== 200)
          throw new Error(`POST /busy_threshold on A: ${res.status} ${res.text}`);
        return (nowNs() - t0) / 1e6;
      };
      prober = new PacedProber(b.url, PATH, chatBody(MODEL, 1));
      await set(null);
      await prober.until((s) => s === 200, nowNs(), 15000);
      const trials = ctx.quick ? 25 : 100;
      ctx.log(
        `${trials} trials each way: threshold 0.4 on A → first 503 on B, 0.6 on A → first 200 on B`,
      );
      const on: number[] = [];
      const off: number[] = [];
      const postMs: number[] = [];
      for (let i = 0; i < trials; i++) {
        for (const [t, into, done] of [
          [0.4, on, isOverload],
          [0.6, off, (s: number) => s === 200],
        ] as const) {
          const t0 = nowNs();
          const post = set(t);
          const r = await prober.until(done, t0, 10000);
          postMs.push(await post);
          into.push(r.ns / 1e6);
          await sleep(5 + Math.random() * 10);
        }
        if ((i + 1) % 25 === 0) ctx.log(`${i + 1}/${trials} trials`);
      }
      await set(null);
      const all = [...on, ...off];
      const figures = [trialFigure(6, 'Threshold propagation A → B', all, 99, 100)];
      const details = [
        'Two frontend replicas on the same PostgreSQL database and NATS namespace (A on CPU 1, B on',
        'CPU 0), `token-capacity` with no global threshold, one worker of a model of its own reporting',
        '50 / 100 decode blocks (and served by a simulated worker). Each trial POSTs a per-model',
        'decode threshold to A (0.4: the worker becomes busy; 0.6: free again) and probes B with chat',
        'requests about once a millisecond until its answer changes (first 503, resp. first 200). Time from just',
        "before the POST to B's changed answer: A's transaction and audit row, A's NATS notification,",
        "B's reload of the model's row, and one HTTP round trip.",
        '',
        '| direction | trials | p50 ms | p90 ms | p99 ms | max ms |',
        '| --- | ---: | ---: | ---: | ---: | ---: |',
        trialRow('set 0.4 on A → first 503 on B', on),
        trialRow('set 0.6 on A → first 200 on B', off),
        trialRow('both', all),
        '',
        `The POST on A itself answered in ${fmt(median(postMs), 2)} ms (median).`,
      ].join('\n');
      const analysis = figures
        .filter((f) => f.verdict === 'MISS')
        .map(
          (f) =>
            `**${f.name}: ${fmt(f.median, 1)} ms (target < 100 ms).** The POST on A alone takes ${fmt(median(postMs), 1)} ms (median); the rest is the notification and B's reload.`,
        );
      return { figures, details, analysis };
    } finally {
      hb.stop();
      await prober?.close();
      await bus.close();
      await g.stopAll();
    }
  },
};
