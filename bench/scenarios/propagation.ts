import { Heartbeat, ReportBus } from '../lib/bus';
import { BenchContext, CPU } from '../lib/context';
import { chatBody, httpPost, isOverload, PacedProber } from '../lib/http';
import { describeProcess } from '../lib/processes';
import { below, figure, Plan, Scenario, ScenarioResult } from '../lib/scenario';
import { startFrontend, startWorker } from '../lib/sluice';
import { fmt, median, nowNs, percentile, uniqueNamespace } from '../lib/util';
import { timeChange, TRIAL_HEAD, trialRow } from './reaction';

const PATH = '/v1/chat/completions';
/** A model of its own, so the stored thresholds never touch another scenario. */
const MODEL = 'bench/propagation';

/** A per-model threshold set on replica A until it decides requests on replica B. */
export const propagationScenario: Scenario = {
  id: 'propagation',
  title: 'Threshold propagation between replicas',
  plan: (quick) => (quick ? { rounds: 2, seconds: 12 } : { rounds: 5, seconds: 30 }),
  async run(ctx: BenchContext, plan: Plan): Promise<ScenarioResult> {
    const g = ctx.group();
    const bus = await ReportBus.connect(ctx.natsUrl, uniqueNamespace('propagation'));
    const hb = new Heartbeat(bus);
    let probe: PacedProber | undefined;
    try {
      const worker = await startWorker(g, ['--speedup', '0', '--model', MODEL], {
        cpu: CPU.client,
      });
      const common = {
        ...{ natsUrl: ctx.natsUrl, databaseUrl: ctx.databaseUrl, namespace: bus.namespace },
        flags: ['--admission-control', 'token-capacity'],
      };
      const [a, b] = await Promise.all([
        startFrontend(g, { ...common, name: 'frontend-A', cpu: CPU.client }),
        startFrontend(g, { ...common, name: 'frontend-B', cpu: CPU.server }),
      ]);
      hb.set({
        worker_id: 'propagation-1',
        model: MODEL,
        endpoint: worker.url,
        active_decode_blocks: 50,
      });
      const postMs: number[] = [];
      const set = async (t: number | null): Promise<void> => {
        const t0 = performance.now();
        const res = await httpPost(
          `${a.url}/busy_threshold`,
          JSON.stringify({ model: MODEL, active_decode_blocks_threshold: t }),
        );
        if (res.status !== 200)
          throw new Error(`POST /busy_threshold on A: ${res.status} ${res.text}`);
        postMs.push(performance.now() - t0);
      };
      probe = new PacedProber(b.url, PATH, chatBody(MODEL, 1));
      await set(null);
      await probe.until((s) => s === 200, nowNs(), 15000);
      const p = probe;
      const trials = ctx.quick ? 10 : 40;
      ctx.log(
        `${plan.rounds} rounds of ${trials} trials each way (0.4 on A → 503 on B, 0.6 → 200)`,
      );
      const rounds: number[][] = [];
      for (let r = 0; r < plan.rounds; r++) {
        const xs: number[] = [];
        for (let i = 0; i < trials; i++) {
          xs.push(await timeChange(() => set(0.4), p, isOverload));
          xs.push(
            await timeChange(
              () => set(0.6),
              p,
              (s) => s === 200,
            ),
          );
        }
        rounds.push(xs);
        ctx.log(`p99 ${fmt(percentile(xs, 99))} ms`);
      }
      await set(null);
      return {
        figures: [
          figure(
            'Threshold set on A → applied on B, p99 of a round',
            'ms',
            rounds.map((xs) => percentile(xs, 99)),
            below(100),
          ),
        ],
        details: [
          'Two frontend replicas on the same PostgreSQL database and NATS namespace (A on CPU 1, B on',
          'CPU 0), `token-capacity` with no global threshold, one worker of a model of its own reporting',
          '50 / 100 decode blocks. A trial POSTs a per-model decode threshold to A (0.4: the worker is',
          'busy; 0.6: free again) and probes B with chat requests about once a millisecond until its',
          "answer changes; the time runs from just before the POST to B's changed answer (A's",
          "transaction and audit row, its NATS notification, B's reload of the row, one round trip).",
          '',
          ...TRIAL_HEAD,
          trialRow('both ways, every round', rounds.flat()),
          '',
          `The POST on A itself answered in ${fmt(median(postMs), 2)} ms (median).`,
        ].join('\n'),
        processes: [
          describeProcess('frontend B', b.proc.pid),
          describeProcess('frontend A', a.proc.pid),
        ],
      };
    } finally {
      hb.stop();
      await probe?.close();
      await bus.close();
      await g.stopAll();
    }
  },
};
