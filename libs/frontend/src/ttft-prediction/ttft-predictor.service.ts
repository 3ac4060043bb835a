import { Injectable } from '@nestjs/common';
import { WorkerEntry } from '../worker-monitor/worker-entry';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { seedFit, seedPredictMs, TtftFit, TtftModel, workUnits } from './ttft-model';

/**
 * Where a prediction comes from: `seed` before the worker's first observed request (the
 * reported load and its max_num_batched_tokens, or the defaults), `learned` after.
 */
export type PredictionBasis = 'seed' | 'learned';

export interface TtftPrediction {
  /** Predicted time from sending the request to the worker to its first token. */
  readonly ms: number;
  readonly basis: PredictionBasis;
}

/** What the status page shows of a worker's model. */
export interface TtftModelView extends TtftFit, TtftPrediction {
  /** Prompt tokens ahead of a new request now (WorkerEntry.prefillTokensAhead). */
  readonly tokensAhead: number;
  /** The worker's KV usage now, 0..1 (WorkerEntry.judgedKvUsage). */
  readonly kvUsage: number;
  readonly observations: number;
}

/**
 * Predicts each worker's time to first token from its load and learns from every streamed
 * answer (ttft-model.ts). One model per live worker, kept beside the registry's entry: a worker
 * that is forgotten or replaced takes its model along, and one that comes back starts again
 * from the seed.
 */
@Injectable()
export class TtftPredictor {
  private readonly models = new WeakMap<WorkerEntry, TtftModel>();
  /** When each worker's fit was last checked by a first token (`performance.now()` based). */
  private readonly checkedAt = new WeakMap<WorkerEntry, number>();

  constructor(private readonly registry: WorkerRegistry) {}

  /** For a request of `promptTokens` sent now; undefined for a worker that is not live. */
  predict(workerId: string, promptTokens: number): TtftPrediction | undefined {
    const worker = this.registry.worker(workerId);
    return worker && this.predictFor(worker, promptTokens);
  }

  /** As `predict`, for a worker the caller holds already (no lookup). */
  predictFor(worker: WorkerEntry, promptTokens: number): TtftPrediction {
    const ms = this.predictMs(worker, promptTokens);
    return { ms, basis: this.models.has(worker) ? 'learned' : 'seed' };
  }

  /**
   * `predictFor(...).ms` without allocating: what the TTFT objective's gate asks once per free
   * worker and request.
   */
  predictMs(worker: WorkerEntry, promptTokens: number): number {
    const u = workUnits(worker.prefillTokensAhead(), promptTokens);
    const k = worker.judgedKvUsage();
    const model = this.models.get(worker);
    if (model) return model.predict(u, k);
    const budget = worker.batchedTokenBudget();
    return seedPredictMs(budget === undefined ? undefined : budget / worker.dpSize, u, k);
  }

  /**
   * A request of `promptTokens`, sent while `tokensAhead` prompt tokens were ahead of it on the
   * worker and its KV usage was `kvUsage` (Lease.tokensAhead, Lease.kvUsage: the regressors its
   * prediction used), had its first token `ttftMs` after it was sent.
   */
  observe(
    workerId: string,
    promptTokens: number,
    tokensAhead: number,
    kvUsage: number,
    ttftMs: number,
  ): void {
    const worker = this.registry.worker(workerId);
    if (!worker) return;
    let model = this.models.get(worker);
    if (!model) {
      model = new TtftModel(seedOf(worker));
      this.models.set(worker, model);
    }
    model.observe(workUnits(tokensAhead, promptTokens), kvUsage, ttftMs);
    this.checkedAt.set(worker, performance.now());
  }

  /**
   * Milliseconds since a first token on the worker last checked its prediction (Infinity for a
   * worker never observed): how far its prediction can have drifted from what the worker does.
   */
  uncheckedForMs(worker: WorkerEntry, now = performance.now()): number {
    const at = this.checkedAt.get(worker);
    return at === undefined ? Infinity : now - at;
  }

  /** The model of a worker, for the status page: its fit and what it predicts for an empty prompt. */
  view(worker: WorkerEntry): TtftModelView {
    const model = this.models.get(worker) ?? new TtftModel(seedOf(worker));
    const { ms, basis } = this.predictFor(worker, 0);
    return {
      ms,
      basis,
      ...model.fit,
      tokensAhead: worker.prefillTokensAhead(),
      kvUsage: worker.judgedKvUsage(),
      observations: model.observations,
    };
  }
}

/** The seed of a worker: its per-rank step budget when every rank reports one. */
function seedOf(worker: WorkerEntry): TtftFit {
  const budget = worker.batchedTokenBudget();
  return seedFit(budget === undefined ? undefined : budget / worker.dpSize);
}
