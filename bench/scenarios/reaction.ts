import { Heartbeat, ReportBus } from '../lib/bus';
import { BenchContext, CPU } from '../lib/context';
import { chatBody, isOverload, MODEL, PacedProber } from '../lib/http';
import { describeProcess } from '../lib/processes';
import { below, figure, Plan, Scenario, ScenarioResult } from '../lib/scenario';
import { DECODE_SHEDDING, startFrontend, startWorker } from '../lib/sluice';
import { fmt, nowNs, percentile, sleep, uniqueNamespace } from '../lib/util';

const PATH = '/v1/chat/completions';

/** Milliseconds from `change()` to the first answer `done` accepts, probing about every ms. */
export async function timeChange(
  change: () => unknown,
  probe: PacedProber,
  done: (status: number, text: string) => boolean,
): Promise<number> {
  const t0 = nowNs();
  const changed = Promise.resolve(change());
  const ms = (await probe.until(done, t0, 10000)).ns / 1e6;
  await changed;
  // A pause of a few ms, at random, so the next change lands anywhere in the frontend's turns.
  await sleep(3 + Math.random() * 7);
  return ms;
}

/** A trial table row: p50, p90, p99 and max of every trial of a direction. */
export const trialRow = (label: string, xs: number[]): string =>
  `| ${label} | ${xs.length} | ${[50, 90, 99, 100].map((p) => fmt(percentile(xs, p), 2)).join(' | ')} |`;

export const TRIAL_HEAD = [
  '| direction | trials | p50 ms | p90 ms | p99 ms | max ms |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
];

/**
 * From a worker's report crossing the decode threshold to the first 503, and from the report
 * going back under to the first 200, seen by a client probing about once a millisecond.
 */
export const reactionScenario: Scenario = {
  id: 'reaction',
  title: 'Reaction to a report crossing a threshold',
  plan: (quick) => (quick ? { rounds: 2, seconds: 7 } : { rounds: 5, seconds: 40 }),
  async run(ctx: BenchContext, plan: Plan): Promise<ScenarioResult> {
    const g = ctx.group();
    const bus = await ReportBus.connect(ctx.natsUrl, uniqueNamespace('reaction'));
    const hb = new Heartbeat(bus);
    let probe: PacedProber | undefined;
    try {
      const worker = await startWorker(g, ['--speedup', '0'], { cpu: CPU.client });
      const fe = await startFrontend(g, {
        ...{ natsUrl: ctx.natsUrl, databaseUrl: ctx.databaseUrl, namespace: bus.namespace },
        ...{ cpu: CPU.server, flags: DECODE_SHEDDING },
      });
      const report = (decode: number): void =>
        hb.set({
          worker_id: 'probe-1',
          model: MODEL,
          endpoint: worker.url,
          active_decode_blocks: decode,
        });
      probe = new PacedProber(fe.url, PATH, chatBody(MODEL, 1));
      report(10);
      await probe.until((s) => s === 200, nowNs(), 15000);
      const [warm, trials] = ctx.quick ? [20, 20] : [150, 100];
      const p = probe;
      const flip = async (into: { up: number[]; down: number[] }): Promise<void> => {
        into.up.push(await timeChange(() => report(90), p, isOverload));
        into.down.push(
          await timeChange(
            () => report(10),
            p,
            (s) => s === 200,
          ),
        );
      };
      // A fresh frontend and worker are slow for their first ~100 flips (V8 still compiling their
      // paths); a frontend in service has long been warm, so those flips are not counted.
      ctx.log(`${warm} warm-up flips, then ${plan.rounds} rounds of ${trials} flips each way`);
      const warmUp = { up: [] as number[], down: [] as number[] };
      for (let i = 0; i < warm; i++) await flip(warmUp);
      const rounds = Array.from({ length: plan.rounds }, () => ({
        up: [] as number[],
        down: [] as number[],
      }));
      for (const r of rounds) {
        for (let i = 0; i < trials; i++) await flip(r);
        ctx.log(
          `over → 503 p99 ${fmt(percentile(r.up, 99))} ms, under → 200 p99 ${fmt(percentile(r.down, 99))} ms`,
        );
      }
      const up = rounds.flatMap((r) => r.up);
      const down = rounds.flatMap((r) => r.down);
      return {
        figures: [
          figure(
            'Report over the threshold → first 503, p99 of a round',
            'ms',
            rounds.map((r) => percentile(r.up, 99)),
            below(10),
          ),
          figure(
            'Report back under → first 200, p99 of a round',
            'ms',
            rounds.map((r) => percentile(r.down, 99)),
            below(10),
          ),
        ],
        details: [
          'One worker of the model, reported on NATS by the bench with a heartbeat every second; the',
          'frontend (`token-capacity`, decode threshold 0.85) on CPU 0, a simulated worker (`--speedup 0`)',
          `behind it and the bench on CPU 1. A flip publishes a report over the threshold (90 / 100`,
          'blocks) and probes with chat requests about once a millisecond until the first 503, then the',
          'same back under (10 / 100) until the first 200; the time runs from just before the publish to',
          'that answer (NATS, the frontend applying the report, the probe interval, one round trip).',
          `${warm} flips on the fresh processes first, not counted; then ${trials} flips per round.`,
          '',
          ...TRIAL_HEAD,
          trialRow('over → first 503', up),
          trialRow('under → first 200', down),
          trialRow('over → first 503, warm-up flips', warmUp.up),
          trialRow('under → first 200, warm-up flips', warmUp.down),
        ].join('\n'),
        processes: [describeProcess('Sluice frontend', fe.proc.pid)],
      };
    } finally {
      hb.stop();
      await probe?.close();
      await bus.close();
      await g.stopAll();
    }
  },
};
