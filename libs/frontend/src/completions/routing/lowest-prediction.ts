import { TtftPredictor } from '../../ttft-prediction/ttft-predictor.service';
import { WorkerEntry } from '../../worker-monitor/worker-entry';

/** A worker and its predicted time to first token for one request. */
export interface Predicted {
  readonly worker: WorkerEntry;
  readonly ms: number;
}

/**
 * The candidate with the lowest predicted time to first token for a request of `promptTokens`
 * (contract §8, TTFT objective): one O(1) prediction per candidate, one object for the answer.
 * `ok` leaves out workers the router may not use now (the queue's in-flight limit, the worker
 * that just failed). Ties go to the first candidate in the free list.
 */
export function lowestPrediction(
  predictor: TtftPredictor,
  candidates: readonly WorkerEntry[],
  promptTokens: number,
  ok?: (w: WorkerEntry) => boolean,
): Predicted | undefined {
  let best: WorkerEntry | undefined;
  let bestMs = Infinity;
  for (const w of candidates) {
    if (ok !== undefined && !ok(w)) continue;
    const ms = predictor.predictMs(w, promptTokens);
    if (ms < bestMs) {
      best = w;
      bestMs = ms;
    }
  }
  return best === undefined ? undefined : { worker: best, ms: bestMs };
}
