import { bucketQuantile, bucketsSum, bucketsTotal } from '../lib/prom-histogram';
import { fmt, median, pct } from '../lib/util';
import { classDetails } from './s7-classes';
import type { Rounds } from './s7-rounds';
import { byObjective, ofKind, wrongRefusals } from './s7-measures';
import { fullStepMs, loneStepMs } from './s7-analysis';
import { MAX_TOKENS, PROMPT } from './s7-tools';
import {
  ClassPoint,
  LOADS,
  Point,
  POLICIES,
  POLICY_NAMES,
  SampleKind,
  SamplePoint,
} from './s7-types';

const SAMPLE_KIND_NAMES: Record<SampleKind, string> = {
  record: 'objective of record, sampling',
  tight: 'tighter objective, admitting its would-be refusals',
  'tight-static': 'static thresholds, judged by the tighter objective',
  'tight-enforced': 'tighter objective, enforced',
};

const med = (xs: Array<number | null>): number | null =>
  median(xs.filter((x): x is number => x !== null && Number.isFinite(x)));

function policyRows(points: Point[]): string[] {
  const rows: string[] = [];
  for (const load of LOADS) {
    for (const policy of POLICIES) {
      const ps = points.filter((p) => p.load === load && p.policy === policy);
      if (ps.length === 0) continue;
      const m = (f: (p: Point) => number | null): number | null => med(ps.map(f));
      const cut = ps.reduce((a, p) => a + p.window_aborted, 0);
      const bound = ps.some((p) => p.ttft_p99_lower_bound) ? '≥ ' : '';
      const objectiveShare = policy === 'slo' ? pct(m(byObjective)) : '–';
      rows.push(
        `| ${load}× | ${fmt(ps[0].rate)} | ${POLICY_NAMES[policy]} | ${fmt(m((p) => p.goodput_slo_rps))} | ` +
          `${fmt(m((p) => p.goodput_rps))} | ${pct(m((p) => p.rejection_ratio))} | ${objectiveShare} | ` +
          `${pct(
            m((p) => p.admitted_met_share),
            1,
          )} | ${fmt(
            m((p) => p.ttft_p50_ms),
            0,
          )} | ${bound}${fmt(
            m((p) => p.ttft_p99_ms),
            0,
          )} | ` +
          `${fmt(
            m((p) => p.latency_p50_ms),
            0,
          )} | ${fmt(
            m((p) => p.latency_p99_ms),
            0,
          )} | ${cut} | ` +
          `${pct(m((p) => p.kv_used_mean))} | ${fmt(m((p) => p.prefill_queued_mean))} |`,
      );
    }
  }
  return rows;
}

function predictionRows(points: Point[]): string[] {
  return LOADS.flatMap((load) => {
    const b = bucketsSum(
      points.filter((p) => p.load === load && p.policy === 'slo').map((p) => p.prediction_error),
    );
    if (b.length === 0) return [];
    const q = (x: number): string => {
      const v = bucketQuantile(b, x);
      return v.value === null ? '–' : `${v.atLeast ? '≥ ' : ''}${fmt(1000 * v.value, 0)}`;
    };
    return [`| ${load}× | ${bucketsTotal(b)} | ${q(0.5)} | ${q(0.9)} |`];
  });
}

function sampleRows(samples: SamplePoint[]): string[] {
  return samples.map((s) => {
    // The static frontend and the enforcing one sample nothing: their rows compare what they admit.
    const n =
      s.kind === 'tight-static' || s.kind === 'tight-enforced' ? 0 : s.sample.met + s.sample.missed;
    return (
      `| ${s.round + 1} | ${SAMPLE_KIND_NAMES[s.kind]} | ${fmt(s.rate)} | ${fmt(s.goodput_slo_rps)} | ${pct(s.rejection_ratio)} | ${pct(byObjective(s))} | ` +
      `${pct(s.admitted_met_share, 1)} | ${s.sample.met} | ${s.sample.missed} | ${s.sample.failed} | ${n ? pct(s.sample.met / n, 1) : '–'} |`
    );
  });
}

export function details(R: Rounds, samples: SamplePoint[], classPoints: ClassPoint[]): string {
  const run = R.run;
  const wrong = wrongRefusals(ofKind(samples, 'record'));
  const tightWrong = wrongRefusals(ofKind(samples, 'tight'));
  const share = `${100 * run.sampleShare} %`;
  // Sampled requests per second of the window, as a share of the round's capacity.
  const windowS = run.durationS - run.warmupS;
  const extraOf = (kind: SampleKind): number | null =>
    med(
      ofKind(samples, kind).map(
        (x) =>
          (x.sample.met + x.sample.missed + x.sample.failed) / windowS / run.capacities[x.round],
      ),
    );
  const extra = extraOf('record');
  const tightExtra = extraOf('tight');
  return [
    'Two simulated workers (`--speedup 1`: Dynamo mocker timing, 16,384 KV blocks of 16 tokens,',
    'max 256 sequences, max 8,192 batched tokens each) reporting on NATS, on CPU 1. Frontends on CPU 0',
    'in front of them, one per configuration: **off** (`--admission-control none`); **static',
    `thresholds**, the configuration of record (\`--admission-control token-capacity ${run.shedding}\`);`,
    `**TTFT objective** (\`${run.objectiveFlags} --ttft-slo-ms ${run.objectiveMs}\`); the same with`,
    `\`--ttft-slo-sample ${run.sampleShare}\` for the wrong-refusal estimate; and the static thresholds with`,
    `\`--priority-header none\` for the two-class run. Streaming chat requests of ~${PROMPT} prompt tokens`,
    `and \`max_tokens\` ${MAX_TOKENS}, sent open loop (fixed arrival rate, whatever the answers) by a client`,
    "built from the project's loadgen modules that keeps per-request timestamps, on CPU 1.",
    'During each point only the frontend measured runs, beside the one without shedding that the',
    "scenario reads the workers' state from; the others are stopped (SIGSTOP) and continued after.",
    'Idle, each still takes every report and wakes as often: with all seven running, the loaded',
    "frontend's event loop lagged up to 40–150 ms in every second, and requests waited up to 360 ms",
    'between the client sending them and the frontend reading them (measured 2026-12-02), which no',
    'admission policy sees. A continued frontend drops the workers it did not hear from while',
    'stopped and takes them back from their next report, its TTFT model from the seed: the warm-up',
    'of each point is its learning, as after a restart. NATS dropped the frontend stopped longest',
    '(through three points) as a slow consumer three times in the run of 2026-12-02; it reconnected',
    'on its own before its next point (docs/operations.md, "NATS down").',
    '',
    `*The objective* (${run.objectiveMs} ms): ${run.objectiveMultiple}× the unloaded TTFT p50 of the same request,`,
    `measured at the start of the run through the frontend without shedding (one request a second, each`,
    `alone on its worker; p50 ${fmt(run.unloadedP50Ms, 0)} ms of ${run.unloadedN}). In the worker's timing model a lone`,
    `${PROMPT}-token prompt's step takes ${fmt(loneStepMs(), 0)} ms and a step that prefills a full 8,192-token budget`,
    `at 85 % KV ${fmt(fullStepMs(), 0)} ms. A request admitted to a saturated engine waits for the step in progress,`,
    'then prefills in the next: about two full steps is the TTFT a worker kept at capacity can hold,',
    'and the objective adds half a step for prediction error. A tighter one can only be met with',
    'shorter steps, i.e. workers below capacity. The same objective judges all three policies.',
    '',
    '*Objective on top of the thresholds of record*, not alone (`--admission-control token-capacity`',
    'with no thresholds): measured side by side on 2026-12-02 (two frontends in front of the same',
    'workers, 18 s points, objective 502 ms), at 1× the objective on top served 54.9 req/s within it',
    '(0.92× capacity) with 97.0 % of admitted requests within it, alone 41.3 req/s (0.69×) and',
    '83.9 %; in a second trial alone refused every request from its first point on. The thresholds',
    "bound each engine's queue between reports (the prefill threshold keeps it near one step of",
    'prompt tokens), so the predictor works in the range it has learned; alone, bursts admitted',
    'between reports build queues its fit then reads as a slower worker. `npm run bench -- --only 7',
    '--objective "FLAGS"` reruns the scenario with other flags beside `--ttft-slo-ms`.',
    '',
    `*Capacity*: completions/s of 600 closed-loop clients sending the same streaming requests through`,
    `the frontend without shedding, counted after a warm-up; measured at the start of every round`,
    `(${run.capacities.map((c) => fmt(c)).join(', ')} req/s; median ${fmt(run.capacity)}), and each round's loads are`,
    `multiples of its own probe. Each point sends for ${run.durationS} s; the figures are of the requests that`,
    `*arrived* in the window [${run.warmupS} s, ${run.durationS} s), whenever they ended (the first ${run.warmupS} s, where`,
    'empty workers take a burst, are left out). *Goodput*: those that succeeded with their first token',
    'within the objective, per second of the window. *Succeeded*: those that succeeded whatever their',
    'TTFT (the by-arrival measure of earlier runs). *Admitted within the objective*: of the requests',
    'not refused (errors and cut-off ones included), the share whose first token came within it.',
    '*Best*: per round, the highest goodput any policy reached at any load; the 4× verdict is the',
    "objective policy's goodput ÷ its round's best. *TTFT*: of every admitted request of the window.",
    `After the window the client waits ${run.drainS} s for answers, then aborts the rest ("cut off"); a cut-off`,
    'request counts with its first-token time if it had one, else with the time it had waited (a lower',
    'bound, shown as ≥ when such values reach the p99). *End-to-end latency*: of the successful requests.',
    `At each load the three policies run in an order rotated each round; ${run.rounds} round(s), medians`,
    "shown; the workers are idle before every point. *By the objective*: the share of the frontend's",
    'refusals (`dynamo_frontend_model_rejection_total`) that the objective made',
    "(`sluice_frontend_slo_rejection_total`), the rest being the thresholds'; both counters read when",
    'the window opens and once the workers are idle again.',
    '*KV in use* and *queued prefill tokens*: what the workers reported in the window (once a second).',
    '',
    '| load | offered req/s | policy | goodput req/s | succeeded req/s | rejected | by the objective | admitted within the objective | TTFT p50 ms | TTFT p99 ms | e2e p50 ms | e2e p99 ms | cut off | KV in use | queued prefill tokens |',
    '| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...policyRows(R.points),
    '',
    '*Prediction error* of the objective policy: its histogram `sluice_frontend_ttft_prediction_error_seconds`',
    "(|predicted − actual| TTFT of each admitted request, buckets 5 ms … 5 s) read when a point's window",
    'opens and again once the workers are idle; the difference, summed over the rounds (per load below, over',
    'every load for the figure), gives the p50 and p90 by linear interpolation within the bucket that holds',
    "them, as Prometheus' `histogram_quantile` does: exact to a bucket's width, not to the millisecond.",
    '',
    '| load | admitted requests | error p50 ms | error p90 ms |',
    '| ---: | ---: | ---: | ---: |',
    ...(predictionRows(R.points).length
      ? predictionRows(R.points)
      : ['| – | none observed (the frontend exported no prediction error) | | |']),
    '',
    `*Wrong refusals*: once per round, after the policy points, the 4× load goes to the objective frontend`,
    `that admits ${share} of the requests it would refuse; \`sluice_frontend_slo_sample_total{outcome}\` says`,
    'whether each met the objective. Wrong-refusal share = met ÷ (met + missed), pooled over the rounds;',
    `\`failed\` ones (no answer) are left out. ${
      wrong.judged > 0
        ? `Here: ${wrong.met} of ${wrong.judged} met it (${fmt(wrong.share, 1)} %), ${wrong.failed} failed.`
        : `Here: no sampled would-be refusal got a first token (${wrong.failed} failed): the objective itself refused too few requests at 4× for a ${share} sample to catch one (the "by the objective" column), so there is no wrong-refusal share to report.`
    }`,
    "Only the objective's own refusals are sampled, not the thresholds' (a request refused because",
    'every worker is over its thresholds never reaches the prediction), so the sample is small. The',
    `sampled requests add load (here ~${fmt(extra, 3)}× capacity), so they are judged with slightly busier`,
    'workers than the refusals they stand for: if anything the share is an underestimate. The point',
    'is not one of the policy points above.',
    '',
    `*At a tighter objective* (${run.tightMs} ms, ${run.tightMultiple}× the unloaded p50, about one and a half full`,
    'engine steps): beside the thresholds of record the objective of record refuses little or nothing',
    'of its own at 4×, so a sample of its refusals says nothing; this one refuses on its own. Once per',
    `round a fourth objective frontend (the same flags, \`--ttft-slo-ms ${run.tightMs} --ttft-slo-sample ${run.tightSampleShare}\`)`,
    'takes the 4× load, and so does the static frontend, judged by the same tighter objective. It',
    `admits ${100 * run.tightSampleShare} % of its would-be refusals (so it refuses none itself, the "by the objective"`,
    `column): beside the thresholds they are few (judging them all added ~${fmt(tightExtra, 3)}× capacity), and a`,
    '5 % sample of so few catches none. Its "admitted within the objective" includes them.',
    tightWrong.judged > 0
      ? `Here: ${tightWrong.met} of ${tightWrong.judged} sampled refusals met it (${fmt(tightWrong.share, 1)} %), ${tightWrong.failed} failed.`
      : `Here: no sampled refusal got a first token (${tightWrong.failed} failed).`,
    'Then a fifth frontend enforces the tighter objective (`--ttft-slo-sample 0`: it refuses its',
    'would-be refusals) under the same 4× load: what the objective does when it is in charge, beside',
    'the static thresholds judged by it. Its refusals take load off the workers, so its engine steps',
    'are shorter than those the sampling frontend keeps full.',
    '',
    '| round | point | offered req/s | goodput req/s | rejected | by the objective | admitted within the objective | sampled, met | sampled, missed | sampled, failed | wrong refusals |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...sampleRows(samples),
    '',
    classDetails(classPoints),
  ].join('\n');
}
