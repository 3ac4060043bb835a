import { Injectable } from '@nestjs/common';
import { FrontendConfig } from '../../config/frontend-config';
import { PriorityClass } from '../../config/priority';
import { ThresholdsService } from '../../thresholds/thresholds.service';
import { TtftPredictor } from '../../ttft-prediction/ttft-predictor.service';
import { ModelEntry, WorkerEntry } from '../../worker-monitor/worker-entry';
import { lowestPrediction, Predicted } from './lowest-prediction';
import { ModelRoute, pickWorker } from './worker-picker';
import { WorkerTraffic } from './worker-traffic';

/**
 * A worker still running requests of this frontend is explored only once its prediction has gone
 * this long unchecked by a first token. Under load, first tokens come every engine step and check
 * the fit all the time: a prediction over the objective there is the worker's real state, and a
 * request explored into it misses (docs/architecture.md, "TTFT objective"). A fit inflated by an
 * overload that has passed gets no first tokens once the gate refuses: after this long, the next
 * would-be refusal is explored and corrects it. A second is several engine steps of any engine the
 * contract's reports describe, and bounds how long such a gate refuses in error while requests of
 * ours are still decoding there; a worker with none of ours in flight is explored at once.
 */
export const EXPLORE_UNCHECKED_MS = 1000;

/** `performance.now()` of a worker's last exploration; absent: never explored. */
type ExploredAt = WeakMap<WorkerEntry, number>;

/**
 * Which workers may take a request: the candidates for its priority class, the ones the router
 * queue's in-flight limit leaves eligible (`--router-queue-threshold F`: at most F ×
 * max_num_batched_tokens prompt tokens in flight from this frontend), and the pick among them —
 * by `--router-mode`, or the lowest predicted time to first token under a TTFT objective.
 */
@Injectable()
export class WorkerChoice {
  /** Null without a router queue: every candidate is eligible. */
  readonly eligible: ((w: WorkerEntry) => boolean) | null;
  /** A worker the TTFT objective's gate may explore now (see `lowestExplorable`). */
  private readonly explorable: (w: WorkerEntry) => boolean;
  private readonly exploredAt: ExploredAt = new WeakMap();
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
    const exploredAt = this.exploredAt;
    const interval = config.exploreIntervalMs;
    this.explorable = (w) => {
      const ours = traffic.peek(w);
      return (
        ours.prefilling === 0 &&
        (ours.requests === 0 || predictor.uncheckedForMs(w) >= EXPLORE_UNCHECKED_MS) &&
        performance.now() - (exploredAt.get(w) ?? -Infinity) >= interval &&
        (eligible === null || eligible(w))
      );
    };
  }

  /**
   * The workers free for class `c`, or every worker in routing (not ejected) when none is and the
   * model does not enforce.
   */
  candidates(model: ModelEntry, c: PriorityClass): readonly WorkerEntry[] {
    const free = model.freeFor[c];
    return free.length > 0 || this.thresholds.admissionControl(model.name) === 'token-capacity'
      ? free
      : [...model.workers.values()].filter((w) => w.inRouting);
  }

  /**
   * An eligible worker free for class `c`, by `--router-mode`; with every worker busy for it, a
   * model that does not enforce (`shadow`, `none`) still routes, to any worker.
   */
  pick(
    model: ModelEntry,
    c: PriorityClass,
    exclude?: ReadonlySet<WorkerEntry>,
  ): WorkerEntry | undefined {
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
   * The TTFT objective's exploration (ObjectiveGate): the eligible candidate with the lowest
   * prediction among those where nothing of this frontend waits for its first token, and whose
   * prediction nothing checks now — none of this frontend's requests is on the worker at all, or
   * none has had its first token there for EXPLORE_UNCHECKED_MS — and that was last explored
   * at least `--explore-interval-ms` ago. The one returned counts as explored now: sequential
   * requests to a worker slower than the objective are refused but for one per interval.
   */
  lowestExplorable(
    candidates: readonly WorkerEntry[],
    promptTokens: number,
  ): Predicted | undefined {
    const explored = lowestPrediction(this.predictor, candidates, promptTokens, this.explorable);
    if (explored) this.exploredAt.set(explored.worker, performance.now());
    return explored;
  }

  /** The round-robin cursor of a model the registry no longer knows. */
  forget(model: string): void {
    this.routes.delete(model);
  }
}
