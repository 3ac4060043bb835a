import { TtftPredictor } from '../../ttft-prediction/ttft-predictor.service';
import { WorkerEntry } from '../../worker-monitor/worker-entry';

/** A worker and its predicted time to first token for one request. */
export interface Predicted {
  readonly worker: WorkerEntry;
  readonly ms: number;
}

/**
 * Predictions this close to the lowest (relative) are a tie, broken by the fewest prompt tokens
 * ahead. The model is linear in the tokens ahead, but an engine prefills a whole
 * `max_num_batched_tokens` budget in one step: within a budget one more prompt adds next to
 * nothing, and the prompt that overflows it waits a whole step more. Sending a burst to the one
 * worker whose prediction is a millisecond lower would stack it past its budget; spread over
 * near-equal workers, the burst fits in each one's next step.
 */
export const PREDICTION_TIE = 0.05;

/**
 * The predictions of one call, by candidate index, so the tie-break's pass does not predict
 * again. Grown to the largest candidate list seen; one call runs at a time (no await inside).
 */
let predicted = new Float64Array(64);

/**
 * The candidate with the lowest predicted time to first token for a request of `promptTokens`
 * (docs/operations.md#ttft-objective, TTFT objective), near-ties (PREDICTION_TIE) to the fewest tokens ahead: one O(1)
 * prediction per candidate, no allocation but the answer. `ok` leaves out workers the router may
 * not use now (the queue's in-flight limit, the worker that just failed). Exact ties go to the
 * first candidate in the free list.
 */
export function lowestPrediction(
  predictor: TtftPredictor,
  candidates: readonly WorkerEntry[],
  promptTokens: number,
  ok?: (w: WorkerEntry) => boolean,
): Predicted | undefined {
  if (predicted.length < candidates.length) predicted = new Float64Array(candidates.length * 2);
  let lowestMs = Infinity;
  for (let i = 0; i < candidates.length; i++) {
    const w = candidates[i];
    const ms = ok === undefined || ok(w) ? predictor.predictMs(w, promptTokens) : Infinity;
    predicted[i] = ms;
    if (ms < lowestMs) lowestMs = ms;
  }
  if (lowestMs === Infinity) return undefined;
  const tie = lowestMs + PREDICTION_TIE * Math.max(lowestMs, 0);
  let best: WorkerEntry | undefined;
  let bestMs = Infinity;
  let bestAhead = Infinity;
  for (let i = 0; i < candidates.length; i++) {
    const ms = predicted[i];
    if (ms > tie) continue;
    const w = candidates[i];
    const ahead = w.prefillTokensAhead();
    if (ahead < bestAhead || (ahead === bestAhead && ms < bestMs)) {
      best = w;
      bestMs = ms;
      bestAhead = ahead;
    }
  }
  return best === undefined ? undefined : { worker: best, ms: bestMs };
}
