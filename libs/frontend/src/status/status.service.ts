import { Injectable } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { perClass } from '../config/priority';
import { OutlierEjection } from '../worker-monitor/outlier-ejection';
import { ModelEntry, WorkerEntry } from '../worker-monitor/worker-entry';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { WorkerTraffic } from '../completions/routing/worker-traffic';
import { BusyThresholds } from '../thresholds/busy-thresholds';
import { toWire } from '../thresholds/threshold-wire';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { TtftPredictor } from '../ttft-prediction/ttft-predictor.service';
import {
  ModelStatusDto,
  StatusDto,
  TtftPredictionStatusDto,
  WorkerStatusDto,
} from './dto/status.dto';
import { rankStatus } from './rank-status';
import { REJECTION_WINDOW_SECONDS, RejectionRateService } from './rejection-rate.service';
import { TenantStatus } from './tenant-status.service';

/**
 * Bounds on one answer: the page polls every second, and reports (hence models, workers and
 * ranks) come from the network. Models and workers past the bounds are counted, not listed.
 */
export const STATUS_LIMITS = { maxModels: 100, maxRanksListed: 4096 } as const;

/** A snapshot of what admission sees, for `GET /ui/status.json`. */
@Injectable()
export class StatusService {
  constructor(
    private readonly config: FrontendConfig,
    private readonly registry: WorkerRegistry,
    private readonly thresholds: ThresholdsService,
    private readonly rejections: RejectionRateService,
    private readonly traffic: WorkerTraffic,
    private readonly predictor: TtftPredictor,
    private readonly ejection: OutlierEjection,
    private readonly tenants: TenantStatus,
  ) {}

  snapshot(nowMs = Date.now()): StatusDto {
    const names = new Set([
      ...this.registry.modelNames(),
      ...this.thresholds.modelsWithOverrides(),
    ]);
    const listed = [...names].sort().slice(0, STATUS_LIMITS.maxModels);
    const budget = { ranks: STATUS_LIMITS.maxRanksListed };
    return {
      generated_at_ms: nowMs,
      admission_control: this.config.admissionControl,
      rejection_window_seconds: REJECTION_WINDOW_SECONDS,
      models_omitted: names.size - listed.length,
      models: listed.map((name) => this.modelStatus(name, nowMs, budget)),
      tenants: this.tenants.snapshot(),
    };
  }

  private modelStatus(name: string, nowMs: number, budget: { ranks: number }): ModelStatusDto {
    const t = this.thresholds.effective(name);
    const model: ModelEntry | undefined = this.registry.model(name);
    const all = model ? [...model.workers.values()] : [];
    all.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const workers: WorkerStatusDto[] = [];
    let inflight = 0;
    for (const worker of all) {
      inflight += this.traffic.peek(worker).requests;
      if (worker.dpSize > budget.ranks) continue;
      budget.ranks -= worker.dpSize;
      workers.push(this.workerStatus(worker, t, nowMs));
    }
    return {
      model: name,
      ...toWire(t),
      all_busy: model?.allBusy ?? false,
      rejections_per_second: this.rejections.perSecond(name),
      rejections_total: this.rejections.total(name),
      inflight_requests: inflight,
      workers_total: all.length,
      // Counted, not taken from the free list: an ejected worker is in no free list.
      workers_busy: all.filter((w) => w.busy).length,
      priority_classes: perClass((c) => ({
        workers_free: model?.freeFor[c].length ?? 0,
        all_busy: model?.allBusyFor(c) ?? false,
      })),
      workers_omitted: all.length - workers.length,
      workers,
    };
  }

  private workerStatus(worker: WorkerEntry, t: BusyThresholds, nowMs: number): WorkerStatusDto {
    return {
      worker_id: worker.id,
      endpoint: worker.endpoint,
      busy: worker.busy,
      dp_size: worker.dpSize,
      inflight_requests: this.traffic.peek(worker).requests,
      inflight_prompt_tokens: this.traffic.peek(worker).promptTokens,
      last_report_age_ms: Math.max(0, nowMs - worker.lastSeenMs),
      report_measured_age_ms: Math.max(0, nowMs - worker.lastReportMs),
      report_source: worker.source ?? null,
      ...this.routing(worker),
      ttft_prediction: this.prediction(worker),
      ranks: Array.from({ length: worker.dpSize }, (_, i) =>
        rankStatus(i, worker.ranks.get(i), t, worker.dpSize),
      ),
    };
  }

  private routing(
    worker: WorkerEntry,
  ): Pick<WorkerStatusDto, 'routing' | 'consecutive_failures' | 'ejected_until_ms'> {
    const view = this.ejection.view(worker);
    return {
      routing: view.phase,
      consecutive_failures: view.consecutiveFailures,
      ejected_until_ms: view.ejectedUntilMs,
    };
  }

  private prediction(worker: WorkerEntry): TtftPredictionStatusDto {
    const view = this.predictor.view(worker);
    return {
      predicted_ms: view.ms,
      basis: view.basis,
      base_ms: view.baseMs,
      ms_per_1k_tokens: view.msPerUnit,
      ms_at_full_kv: view.msAtFullKv,
      tokens_ahead: view.tokensAhead,
      kv_usage: view.kvUsage,
      observations: view.observations,
    };
  }
}
