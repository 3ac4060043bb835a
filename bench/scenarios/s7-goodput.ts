import { BenchContext, CPU, Scenario, ScenarioResult } from '../lib/context';
import { metrics, metricSum } from '../lib/http';
import { startFrontend, startWorker, Started } from '../lib/sluice';
import { fmt, median, pct, rotate, uniqueNamespace, waitFor } from '../lib/util';
import { summarize } from './s7-summary';
import { alone, probeCapacity, runPoint, settle, unloadedTtft } from './s7-tools';
import {
  CLASS_LOAD,
  CLASS_RUNS,
  ClassPoint,
  ClassRun,
  LOADS,
  OBJECTIVE_MULTIPLE,
  SAMPLE_SHARE,
  TIGHT_SAMPLE_SHARE,
  SampleKind,
  TIGHT_MULTIPLE,
  Point,
  POLICIES,
  Policy,
  POLICY_NAMES,
  PointResult,
  SamplePoint,
} from './s7-types';

const describe = (r: PointResult): string =>
  `goodput ${fmt(r.goodput_slo_rps)} req/s within the objective (${fmt(r.goodput_rps)} succeeded), ` +
  `rejected ${pct(r.rejection_ratio)}, admitted meeting it ${pct(r.admitted_met_share ?? NaN, 1)}, ` +
  `TTFT p50 ${fmt(r.ttft_p50_ms, 0)} / p99 ${fmt(r.ttft_p99_ms, 0)} ms` +
  (r.window_aborted ? `, ${r.window_aborted} cut off by the drain timeout` : '');

/**
 * Scenario 7 (the headline): two simulated workers with realistic timing, open-loop arrivals at
 * 0.5×, 1×, 2× and 4× their measured capacity, three admission policies interleaved.
 */
export const goodputScenario: Scenario = {
  id: 7,
  title: 'Goodput under overload',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const g = ctx.group();
    const ns = uniqueNamespace('s7');
    try {
      const workerFlags = ['--speedup', '1', '--nats-url', ctx.natsUrl, '--namespace', ns];
      for (const id of ['1', '2'])
        await startWorker(g, [...workerFlags, '--worker-id', `sim-${id}`], {
          cpu: CPU.client,
          name: `worker-${id}`,
        });
      const common = {
        natsUrl: ctx.natsUrl,
        databaseUrl: ctx.databaseUrl,
        namespace: ns,
        cpu: CPU.server,
      };
      const start = async (name: string, flags: string[]): Promise<Started> => {
        const fe = await startFrontend(g, { ...common, name: `frontend-${name}`, flags });
        await waitFor(
          async () =>
            metricSum(await metrics(fe.url), 'dynamo_frontend_worker_kv_total_blocks') > 0,
          `workers known to frontend-${name}`,
        );
        return fe;
      };
      const record = ['--admission-control', 'token-capacity', ...ctx.sheddingFlags];
      const off = await start('off', ['--admission-control', 'none']);
      const stat = await start('static', record);
      // The two-class run with the header ignored (every request judged as `standard`).
      const noClasses = await start('no-classes', [...record, '--priority-header', 'none']);

      ctx.log('unloaded TTFT: one request a second through the frontend without shedding');
      const unloaded = await alone([off, stat, noClasses], [off], () =>
        unloadedTtft(g, off.url, ctx.quick),
      );
      const objectiveMs = Math.round(OBJECTIVE_MULTIPLE * unloaded.p50);
      ctx.log(
        `unloaded TTFT p50 ${fmt(unloaded.p50, 0)} ms (${unloaded.n} requests): objective ${objectiveMs} ms (${OBJECTIVE_MULTIPLE}×)`,
      );
      // The objective policy's flags with objective `ms`, admitting `sample` of its would-be refusals.
      const objective = (ms: number, sample = 0): string[] => [
        ...ctx.objectiveFlags,
        ...['--ttft-slo-ms', String(ms), '--ttft-slo-sample', String(sample)],
      ];
      const slo = await start('slo', objective(objectiveMs));
      const sampler = await start('slo-sample', objective(objectiveMs, SAMPLE_SHARE));
      const tightMs = Math.round(TIGHT_MULTIPLE * unloaded.p50);
      const tight = await start('slo-tight', objective(tightMs, TIGHT_SAMPLE_SHARE));
      const tightEnforced = await start('slo-tight-enforced', objective(tightMs, 0));
      const fe: Record<Policy, Started> = { off, static: stat, slo };
      // Only the frontend measured runs, and `off`, which every point reads the workers from.
      const frontends = [off, stat, noClasses, slo, sampler, tight, tightEnforced];
      await settle(off);

      const rounds = ctx.quick ? 1 : 3;
      const [durationS, warmupS, drainS] = ctx.quick ? [6, 2, 4] : [18, 8, 6];
      // Quick runs keep only the two loads the targets compare.
      const loads = ctx.quick ? [0.5, 4] : LOADS;
      const points: Point[] = [];
      const samples: SamplePoint[] = [];
      const classPoints: ClassPoint[] = [];
      const capacities: number[] = [];
      const point = (
        target: Started,
        rate: number,
        mix = '-',
        judgedBy = objectiveMs,
      ): Promise<PointResult> =>
        alone(frontends, [target, off], () =>
          runPoint(g, {
            target,
            observer: off,
            rate,
            mix,
            objectiveMs: judgedBy,
            durationS,
            warmupS,
            drainS,
          }),
        );
      for (let round = 0; round < rounds; round++) {
        const tag = `round ${round + 1}/${rounds}`;
        ctx.log(
          `${tag}: capacity probe, 600 closed-loop streaming clients through the frontend without shedding`,
        );
        const capacity = await alone(frontends, [off], () => probeCapacity(g, off.url, ctx.quick));
        capacities.push(capacity);
        ctx.log(`capacity ≈ ${fmt(capacity)} successful requests/s`);
        await settle(off);
        const rateOf = (load: number): number => Math.round(load * capacity * 10) / 10;
        for (const load of loads) {
          for (const policy of rotate(POLICIES, round)) {
            const rate = rateOf(load);
            const r = await point(fe[policy], rate);
            points.push({ ...r, load, policy, round, rate });
            ctx.log(`${tag} ${load}× (${fmt(rate)} req/s) ${POLICY_NAMES[policy]}: ${describe(r)}`);
          }
        }
        const sampleRate = rateOf(4);
        const sampled: Array<[SampleKind, Started, number, string]> = [
          [
            'record',
            sampler,
            objectiveMs,
            `TTFT objective sampling ${100 * SAMPLE_SHARE} % of refusals`,
          ],
          [
            'tight',
            tight,
            tightMs,
            `tighter objective (${tightMs} ms) admitting ${100 * TIGHT_SAMPLE_SHARE} % of its would-be refusals`,
          ],
          ['tight-static', stat, tightMs, `static thresholds judged by the tighter objective`],
          ['tight-enforced', tightEnforced, tightMs, `tighter objective enforced`],
        ];
        for (const [kind, target, judgedBy, what] of sampled) {
          const s = await point(target, sampleRate, '-', judgedBy);
          samples.push({ ...s, kind, round, rate: sampleRate });
          ctx.log(
            `${tag} 4× ${what}: ${describe(s)}` +
              (kind === 'tight-static'
                ? ''
                : `; sampled refusals met ${s.sample.met}, missed ${s.sample.missed}, failed ${s.sample.failed}`),
          );
        }
        const classRate = rateOf(CLASS_LOAD);
        for (const run of rotate(Object.keys(CLASS_RUNS) as ClassRun[], round)) {
          const { mix, classes } = CLASS_RUNS[run];
          const r = await point(classes ? stat : noClasses, classRate, mix);
          const { goodput_rps } = r;
          classPoints.push({
            run,
            round,
            rate: classRate,
            capacity,
            goodput_rps,
            classes: r.classes,
          });
          ctx.log(
            `${tag} ${CLASS_LOAD}× ${mix}, classes ${classes ? 'on' : 'off'}: goodput ${fmt(goodput_rps)} req/s, rejected ` +
              Object.entries(r.classes)
                .map(([c, f]) => `${c} ${pct(f.rejection_ratio, 1)}`)
                .join(', '),
          );
        }
      }
      return summarize(points, samples, classPoints, {
        durationS,
        warmupS,
        drainS,
        rounds,
        quick: ctx.quick,
        shedding: ctx.sheddingFlags.join(' '),
        objectiveFlags: ctx.objectiveFlags.join(' '),
        objectiveMs,
        objectiveMultiple: OBJECTIVE_MULTIPLE,
        tightMs,
        tightMultiple: TIGHT_MULTIPLE,
        unloadedP50Ms: unloaded.p50,
        unloadedN: unloaded.n,
        sampleShare: SAMPLE_SHARE,
        tightSampleShare: TIGHT_SAMPLE_SHARE,
        capacity: median(capacities) ?? NaN,
        capacities,
      });
    } finally {
      await g.stopAll();
    }
  },
};
