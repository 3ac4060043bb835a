import { FrontendConfig } from '../../config/frontend-config';
import { PriorityClass } from '../../config/priority';
import { ThresholdsService } from '../../thresholds/thresholds.service';
import { TtftPredictor } from '../../ttft-prediction/ttft-predictor.service';
import { ModelEntry, WorkerEntry } from '../../worker-monitor/worker-entry';
import { lowestPrediction, Predicted } from './lowest-prediction';
import { ModelRoute, pickWorker } from './worker-picker';
import { WorkerTraffic } from './worker-traffic';

/**
 * Which workers may take a request: the candidates for its priority class, the ones the router
 * queue's in-flight limit leaves eligible (`--router-queue-threshold F`: at most F ×
 * max_num_batched_tokens prompt tokens in flight from this frontend), and the pick among them —
 * by `--router-mode`, or the lowest predicted time to first token under a TTFT objective.
 */
export class WorkerChoice {
  /** Null without a router queue: every candidate is eligible. */
  readonly eligible: ((w: WorkerEntry) => boolean) | null;
  /** Eligible, and none of this frontend's requests waits for its first token on the worker. */
  private readonly alone: (w: WorkerEntry) => boolean;
  private readonly routes = new Map<string, ModelRoute>();

  constructor(
    private readonly config: FrontendConfig,
    private readonly traffic: WorkerTraffic,
    private readonly thresholds: ThresholdsService,
    private readonly predictor: TtftPredictor,
  ) {
    const f = config.routerQueueThreshold;
    this.eligible =
      f === null
        ? null
        : (w) => {
            const budget = w.batchedTokenBudget();
            return budget === undefined || traffic.peek(w).promptTokens <= f * budget;
          };
    const eligible = this.eligible;
    this.alone = (w) => traffic.peek(w).prefilling === 0 && (eligible === null || eligible(w));
  }

  /** The workers free for class `c`, or every worker when none is and the model does not enforce. */
  candidates(model: ModelEntry, c: PriorityClass): readonly WorkerEntry[] {
    const free = model.freeFor[c];
    return free.length > 0 || this.thresholds.admissionControl(model.name) === 'token-capacity'
      ? free
      : [...model.workers.values()];
  }

  /**
   * An eligible worker free for class `c`, by `--router-mode`; with every worker busy for it, a
   * model that does not enforce (`shadow`, `none`) still routes, to any worker.
   */
  pick(model: ModelEntry, c: PriorityClass, exclude?: WorkerEntry): WorkerEntry | undefined {
    const candidates = this.candidates(model, c);
    let route = this.routes.get(model.name);
    if (!route) {
      route = { cursor: 0, traffic: this.traffic };
      this.routes.set(model.name, route);
    }
    return pickWorker(this.config.routerMode, route, candidates, this.eligible, exclude);
  }

  /** The candidate with the lowest predicted time to first token that `ok` lets through. */
  lowest(
    candidates: readonly WorkerEntry[],
    promptTokens: number,
    ok?: (w: WorkerEntry) => boolean,
  ): Predicted | undefined {
    return lowestPrediction(this.predictor, candidates, promptTokens, ok);
  }

  /**
   * The eligible candidate with the lowest prediction among those where nothing of this frontend
   * is waiting for its first token: the TTFT objective's exploration (ObjectiveGate).
   */
  lowestAlone(candidates: readonly WorkerEntry[], promptTokens: number): Predicted | undefined {
    return lowestPrediction(this.predictor, candidates, promptTokens, this.alone);
  }

  /** The round-robin cursor of a model the registry no longer knows. */
  forget(model: string): void {
    this.routes.delete(model);
  }
}
