import { Injectable } from '@nestjs/common';
import { FrontendConfig } from '../../config/frontend-config';
import { PriorityClass } from '../../config/priority';
import { ServiceOverloadedError } from '../../admission/errors/service-overloaded.error';
import { OBJECTIVE_MISSED } from '../../admission/refusal';
import { RequestMetricsService } from '../../request-metrics/request-metrics.service';
import { ThresholdsService } from '../../thresholds/thresholds.service';
import { WorkerEntry } from '../../worker-monitor/worker-entry';
import { Ask } from './ask';
import { Predicted } from './lowest-prediction';
import { WorkerChoice } from './worker-choice';

/** The gate lets the request through to `best`; `sample`: a would-be refusal admitted to measure. */
export interface Admit {
  readonly best: Predicted;
  readonly objectiveMs: number;
  readonly sample: boolean;
}

/** The request waits in the router queue until `deadlineMs` (`performance.now()` based). */
export interface Queue {
  readonly deadlineMs: number;
}

/**
 * The TTFT objective (docs/operations.md#ttft-objective): the free worker with the lowest predicted time to first token
 * gets a request if its prediction is within the objective of the request's class; otherwise the
 * request waits in the router queue while some free worker could still meet its deadline, or it
 * is a would-be refusal. A would-be refusal is first explored: admitted to the free worker with
 * the lowest prediction among those whose prediction nothing checks now — nothing of this
 * frontend's waits for its first token there, and either nothing of ours is there at all or no
 * first token has come from it for EXPLORE_UNCHECKED_MS; and at most once per worker per
 * `--explore-interval-ms`, so that requests sent one after another cannot switch the objective
 * off. The predictor learns only from admitted
 * requests, so a fit inflated under overload would otherwise refuse everything forever once load
 * falls; such a worker's prediction is the one least to be trusted, and the explored request's
 * first token corrects the fit. One exploration at a time per worker (it waits for its first
 * token there) bounds the cost; a worker whose first tokens keep checking its prediction is not
 * explored, since a request sent there against a prediction over the objective misses it.
 * Only when no worker can be explored is the would-be refusal refused, sampled, or admitted, by
 * the model's admission mode. The gate decides; the router leases and queues.
 */
@Injectable()
export class ObjectiveGate {
  constructor(
    private readonly config: FrontendConfig,
    private readonly thresholds: ThresholdsService,
    private readonly metrics: RequestMetricsService,
    private readonly choice: WorkerChoice,
  ) {}

  /** The objective of class `c` for the model (its `ttft_slo_ms` × the class's factor), or null. */
  objectiveOf(model: string, c: PriorityClass): number | null {
    return this.thresholds.byClass(model)[c].ttftSloMs;
  }

  /**
   * A request arriving with `ahead` waiters of its class or higher already queued: admitted if an
   * eligible worker is predicted within `objective` (and nobody is ahead), queued with its
   * deadline (arrival + objective) while some free worker still could be, else `refuseOrAdmit`.
   */
  atArrival(ask: Ask, objective: number, ahead: number): Admit | Queue {
    const eligible = this.choice.eligible;
    const candidates = this.choice.candidates(ask.model, ask.priority);
    const best = this.choice.lowest(candidates, ask.promptTokens, eligible ?? undefined);
    if (ahead === 0 && best && best.ms <= objective) return admit(best, objective);
    if (eligible !== null) {
      const any = this.choice.lowest(candidates, ask.promptTokens);
      const deadlineMs = performance.now() + objective;
      if (!any || any.ms <= objective) return { deadlineMs };
      return this.refuseOrAdmit(ask, best ?? any, objective);
    }
    if (!best) throw new ServiceOverloadedError(ask.model.name);
    return this.refuseOrAdmit(ask, best, objective);
  }

  /**
   * A queued request at the head of its class when a worker may have freed up: admitted to the
   * eligible worker with the lowest prediction if that makes its deadline; `late` once no free
   * worker can; else it goes on waiting.
   */
  forWaiter(ask: Ask, deadlineMs: number, objective: number): Admit | 'wait' | 'late' {
    const now = performance.now();
    const candidates = this.choice.candidates(ask.model, ask.priority);
    const best = this.choice.lowest(
      candidates,
      ask.promptTokens,
      this.choice.eligible ?? undefined,
    );
    if (best && now + best.ms <= deadlineMs) return admit(best, objective);
    return this.lateBy(ask, deadlineMs, now) > 0 ? 'late' : 'wait';
  }

  /** Admitted already, its first worker failed: no refusal now, only the lowest prediction. */
  forRetry(ask: Ask, tried: ReadonlySet<WorkerEntry>, objective: number): Admit | undefined {
    const eligible = this.choice.eligible;
    const other = (w: WorkerEntry) => !tried.has(w) && (eligible?.(w) ?? true);
    const candidates = this.choice.candidates(ask.model, ask.priority);
    const best = this.choice.lowest(candidates, ask.promptTokens, other);
    return best ? admit(best, objective) : undefined;
  }

  /**
   * How far past its deadline a queued request's first token would come if it were sent now to
   * the free worker with the lowest prediction (> 0: it can no longer make it). With no free
   * worker nothing is predicted: only the deadline itself counts.
   */
  lateBy(ask: Ask, deadlineMs: number, now: number): number {
    const candidates = this.choice.candidates(ask.model, ask.priority);
    const best = this.choice.lowest(candidates, ask.promptTokens);
    return now + (best?.ms ?? 0) - deadlineMs;
  }

  /**
   * No free worker is predicted to meet the objective: explored if a free worker's prediction
   * goes unchecked (WorkerChoice.lowestExplorable); else refused in mode token-capacity (but for a
   * `--ttft-slo-sample` share, admitted to measure the gate), counted and admitted in shadow mode,
   * admitted with mode none — to the lowest prediction.
   */
  private refuseOrAdmit(ask: Ask, best: Predicted, objective: number): Admit {
    const { model, priority } = ask;
    const explored = this.choice.lowestExplorable(
      this.choice.candidates(model, priority),
      ask.promptTokens,
    );
    if (explored) {
      this.metrics.explored(model.name);
      return admit(explored, objective);
    }
    switch (this.thresholds.admissionControl(model.name)) {
      case 'token-capacity': {
        const p = this.config.ttftSloSample;
        if (p > 0 && Math.random() < p) return admit(best, objective, true);
        throw new ServiceOverloadedError(model.name, OBJECTIVE_MISSED);
      }
      case 'shadow':
        // A request every worker is busy for was counted by the guard already.
        if (model.freeFor[priority].length > 0) {
          this.metrics.wouldReject(model.name, ask.endpoint, priority);
        }
        return admit(best, objective);
      case 'none':
        return admit(best, objective);
    }
  }
}

function admit(best: Predicted, objectiveMs: number, sample = false): Admit {
  return { best, objectiveMs, sample };
}
