import { decodeStepMs, prefillStepMs } from '../../libs/sim-worker/src/engine/step-timing';
import { Figure } from '../lib/context';
import { fmt, median, pct } from '../lib/util';
import { byObjective } from './s7-measures';
import type { Rounds } from './s7-rounds';
import { PROMPT } from './s7-tools';
import { Point, Policy } from './s7-types';

/** Step time of the simulated worker (Dynamo's mocker model) prefilling `p` tokens at 85 % KV. */
const stepMs = (p: number): number => prefillStepMs(p) + decodeStepMs(0.85);
export const fullStepMs = (): number => stepMs(8192);
export const loneStepMs = (): number => prefillStepMs(PROMPT) + decodeStepMs(0);

/**
 * Why the static thresholds' TTFT at 4× stays above 2× its half-load value: the engines' own
 * step time at the occupancy that goodput ≥ 0.9 needs, from the worker's timing model.
 */
function ttftFloor(halfLoadP99: number | null, shedding: string): string {
  const full = fullStepMs();
  const limit = 2 * (halfLoadP99 ?? NaN);
  // The largest prefill chunk whose step still fits in the 2× budget, and what it leaves of capacity.
  let p = 8192;
  while (p > 256 && stepMs(p) > limit / 2) p -= 256;
  const share = p / stepMs(p) / (8192 / full);
  const bounded = /prefill-tokens-threshold/.test(shedding);
  if (share >= 0.9)
    return (
      `Here the 2× budget (≤ ${fmt(limit, 0)} ms) would allow full steps (${fmt(full, 0)} ms for 8,192 prompt tokens at 85 % KV ` +
      "in the simulated worker's timing model): the half-load p99 was itself high, a sign of other work on the machine, " +
      'and the miss is not the step-time floor but admitted requests waiting behind more than a step of queued prompts (queued prefill tokens above).'
    );
  return (
    (bounded
      ? 'The prefill threshold keeps each engine queue near one step of prompt tokens, so an admitted request waits about one step, then its own prefill step: '
      : 'The decode-blocks rule does not see prompts waiting in an engine (they hold no KV blocks yet), so admitted requests queue behind them; a prefill threshold (`--active-prefill-tokens-threshold[-frac]`) bounds that queue, and then ') +
    `the floor is the step time of a busy engine. In the simulated worker's timing model (Dynamo's mocker) a step ` +
    `that prefills 8,192 tokens at 85 % KV takes ${fmt(full, 0)} ms, while a lone ${PROMPT}-token prompt takes ${fmt(stepMs(PROMPT), 0)} ms. ` +
    `A p99 within 2× of half load (≤ ${fmt(limit, 0)} ms, two steps) needs steps of ≤ ${fmt(limit / 2, 0)} ms, i.e. at most ~${fmt(p, 0)} ` +
    `prompt tokens per step, which caps a worker at ~${pct(share)} of its saturated prompt throughput: ` +
    'with this worker model that TTFT target and the goodput target (≥ 0.90 of capacity) cannot both be met; ' +
    'a TTFT objective of about two full steps can (the objective policy above). docs/operations.md ("Choosing thresholds") shows the trade-off measured for several prefill thresholds.'
  );
}

/** What limits each of scenario 7's figures that miss, with the evidence of the run. */
export function analysis(R: Rounds, figures: Figure[]): string[] {
  const out: string[] = [];
  const v = (load: number, policy: Policy, f: (p: Point) => number | null): number | null =>
    median(
      R.points
        .filter((p) => p.load === load && p.policy === policy)
        .map(f)
        .filter((x): x is number => x !== null && Number.isFinite(x)),
    );
  const state = (policy: Policy): string =>
    `At 4× the workers reported ${pct(v(4, policy, (p) => p.kv_used_mean) ?? NaN)} of their KV blocks in use and ` +
    `${fmt(v(4, policy, (p) => p.prefill_queued_mean))} prompt tokens queued for prefill on average ` +
    `(${fmt(v(0.5, policy, (p) => p.prefill_queued_mean))} at 0.5×).`;
  const missed = (i: number): boolean => figures[i]?.verdict === 'MISS';
  const err = `prediction error p50 ${fmt(median(R.predictionError(0.5)), 0)} / p90 ${fmt(median(R.predictionError(0.9)), 0)} ms`;
  // Points where the objective refused (nearly) everything although the workers sat idle.
  const shut = R.points.filter(
    (p) => p.policy === 'slo' && p.rejection_ratio > 0.99 && (p.kv_used_mean ?? 1) < 0.05,
  );
  if (shut.length > 0 && (missed(0) || missed(1))) {
    out.push(
      `**The objective refused every request with the workers idle** at ${shut.length} of ${R.points.filter((p) => p.policy === 'slo').length} ` +
        `of its points (${[...new Set(shut.map((p) => `${p.load}×`))].join(', ')}; KV in use under 5 %): once its predictions for every ` +
        'worker exceed the objective it admits nothing, so it observes nothing that could bring them back down. ' +
        "`/ui/status.json` shows each worker's fit (`ttft_prediction`).",
    );
  }
  if (missed(0)) {
    const refused = v(4, 'slo', (p) => p.rejection_ratio);
    const objectiveShare = v(4, 'slo', byObjective);
    out.push(
      `**Goodput at 4× with the TTFT objective (${fmt(figures[0].median, 2)} of the best, target ≥ 0.90).** ${state('slo')} ` +
        `It refused ${pct(refused ?? NaN)} of the arrivals (${pct(objectiveShare ?? NaN)} of those by the objective, ` +
        `the rest by the thresholds beside it), with ${err}. Goodput below the best with the workers under ` +
        'capacity means the predictor refuses requests that could have met the objective (the wrong-refusal ' +
        'share below measures how many); with the workers full, that the objective itself is below what a full worker can hold.',
    );
  }
  const admitted4 = R.points.some(
    (p) => p.load === 4 && p.policy === 'slo' && p.window_admitted > 0,
  );
  if (missed(1) && !admitted4) {
    out.push(
      '**Admitted requests within the objective at 4× (none admitted, target ≥ 99 %).** The objective ' +
        'refused every request of the window at 4× in every round: there is no admitted request to judge.',
    );
  } else if (missed(1)) {
    out.push(
      `**Admitted requests within the objective at 4× (${fmt(figures[1].median, 1)} %, target ≥ 99 %).** ${state('slo')} ` +
        `The policy admits a request only when it predicts a TTFT within the objective, so each miss is an ` +
        `underestimate larger than the room left under the objective; ${err} over every load.`,
    );
  }
  const staticGoodput = figures.findIndex((f) =>
    f.name.startsWith('Goodput at 4× capacity, static'),
  );
  if (missed(staticGoodput)) {
    out.push(
      `**Goodput at 4× with static thresholds (${fmt(figures[staticGoodput].median, 2)} of capacity, target ≥ 0.90).** ${state('static')} ` +
        'The decode threshold looks at KV blocks *held by running sequences*; prompts waiting in an engine hold none, so ' +
        'while a worker is under 0.85 every arrival is admitted and joins the engine queue, and when requests finish ' +
        'the queue (not new arrivals) refills the KV.',
    );
  }
  const growth = figures.findIndex((f) =>
    f.name.startsWith('p99 TTFT of admitted requests, static'),
  );
  if (missed(growth)) {
    out.push(
      `**TTFT p99 with static thresholds at 4× (${fmt(
        v(4, 'static', (p) => p.ttft_p99_ms),
        0,
      )} ms vs ` +
        `${fmt(
          v(0.5, 'static', (p) => p.ttft_p99_ms),
          0,
        )} ms at 0.5×, target ≤ 2×).** ${state('static')} ` +
        ttftFloor(
          v(0.5, 'static', (p) => p.ttft_p99_ms),
          R.run.shedding,
        ),
    );
  }
  return out;
}
