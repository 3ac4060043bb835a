import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter, Gauge, Histogram } from 'prom-client';
import { PriorityClass } from '../config/priority';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import {
  COUNTER_LABELS,
  EndpointLabel,
  ErrorType,
  METRIC,
  RetryReason,
  RefusalReason,
  SloSampleOutcome,
} from '../metrics/metric-names';
import { PendingCounts } from '../metrics/pending-counts';
import { TrafficHistory } from './traffic-history';

/**
 * Request-level metrics of docs/metrics.md, with label values kept bounded: only known models
 * become label values, and a model's series go when the registry forgets the model. Admitted
 * and rejected requests also go to the status page's `TrafficHistory`. The counters are counted
 * through `PendingCounts` (plain numbers until a read), the histograms and gauges directly.
 */
@Injectable()
export class RequestMetricsService implements OnModuleDestroy {
  private readonly rejections: PendingCounts<string>;
  private readonly classRejections: PendingCounts<string>;
  private readonly requests: PendingCounts<string>;
  private readonly wouldRejections: PendingCounts<string>;
  private readonly sloRejections: PendingCounts<string>;
  private readonly sloSamples: PendingCounts<string>;
  private readonly refusals: PendingCounts<string>;
  private readonly counters: readonly PendingCounts<string>[];

  constructor(
    private readonly registry: WorkerRegistry,
    @InjectMetric(METRIC.rejections) rejections: Counter,
    @InjectMetric(METRIC.classRejections) classRejections: Counter,
    @InjectMetric(METRIC.requests) requests: Counter,
    @InjectMetric(METRIC.inflight) readonly inflight: Gauge,
    @InjectMetric(METRIC.queued) readonly queued: Gauge,
    @InjectMetric(METRIC.ttft) private readonly ttft: Histogram,
    @InjectMetric(METRIC.duration) private readonly duration: Histogram,
    private readonly history: TrafficHistory,
    @InjectMetric(METRIC.wouldRejections) wouldRejections: Counter,
    @InjectMetric(METRIC.sloRejections) sloRejections: Counter,
    @InjectMetric(METRIC.predictionError) private readonly predictionErrors: Histogram,
    @InjectMetric(METRIC.sloSamples) sloSamples: Counter,
    @InjectMetric(METRIC.explored) private readonly exploredRequests: Counter,
    @InjectMetric(METRIC.upstreamRetries) private readonly retries: Counter,
    @InjectMetric(METRIC.refusals) refusals: Counter,
  ) {
    const { byClass } = COUNTER_LABELS;
    this.rejections = new PendingCounts(rejections, COUNTER_LABELS.rejections);
    this.classRejections = new PendingCounts(classRejections, byClass);
    this.requests = new PendingCounts(requests, COUNTER_LABELS.requests);
    this.wouldRejections = new PendingCounts(wouldRejections, byClass);
    this.sloRejections = new PendingCounts(sloRejections, byClass);
    this.sloSamples = new PendingCounts(sloSamples, COUNTER_LABELS.sloSamples);
    this.refusals = new PendingCounts(refusals, COUNTER_LABELS.refusals);
    this.counters = [
      this.rejections,
      this.classRejections,
      this.requests,
      this.wouldRejections,
      this.sloRejections,
      this.sloSamples,
      this.refusals,
    ];
    registry.observe({ modelForgotten: (model) => void this.forget(model) });
  }

  onModuleDestroy(): void {
    for (const counts of this.counters) counts.close();
  }

  /** A model name from a request body is user input: only known models become label values. */
  modelLabel(model: unknown): string {
    return typeof model === 'string' && this.registry.model(model) ? model : 'unknown';
  }

  /** One overload rejection: docs/metrics.md's counter and docs/security.md#priority-classes-who-may-set-x-sluice-priority's, by priority class. */
  rejected(model: string, endpoint: EndpointLabel, priority: PriorityClass): void {
    this.rejections.inc([model, endpoint]);
    this.classRejections.inc([model, endpoint, priority]);
    this.history.rejected(model, priority);
  }

  /** Any refusal, by the reason its `x-sluice-reject-reason` header gives. */
  refused(model: string, endpoint: EndpointLabel, reason: RefusalReason): void {
    this.refusals.inc([model, endpoint, reason]);
  }

  /** A request goes to a worker: past admission and the router queue. */
  admitted(model: string): void {
    this.history.admitted(model);
  }

  /** Admitted in shadow mode although every worker of the model was busy (docs/operations.md#rolling-out-shedding). */
  wouldReject(model: string, endpoint: EndpointLabel, priority: PriorityClass): void {
    this.wouldRejections.inc([model, endpoint, priority]);
  }

  /** An overload rejection because no free worker was predicted to meet the TTFT objective. */
  sloRejected(model: string, endpoint: EndpointLabel, priority: PriorityClass): void {
    this.sloRejections.inc([model, endpoint, priority]);
  }

  /** |predicted − actual| time to first token of an admitted request, in seconds. */
  predictionError(model: string, seconds: number): void {
    this.predictionErrors.observe({ model }, seconds);
  }

  /** How a would-be objective refusal admitted as a sample turned out. */
  sloSample(model: string, outcome: SloSampleOutcome): void {
    this.sloSamples.inc([model, outcome]);
  }

  /** A would-be objective refusal sent to a worker anyway, to check its prediction. */
  explored(model: string): void {
    this.exploredRequests.inc({ model });
  }

  /** A request sent again before any byte reached its client (UpstreamAttempts). */
  retried(model: string, reason: RetryReason): void {
    this.retries.inc({ model, reason });
  }

  answered(model: string, endpoint: EndpointLabel, stream: boolean, errorType: ErrorType): void {
    const status = errorType === '' ? 'success' : 'error';
    this.requests.inc([model, endpoint, stream ? 'stream' : 'unary', status, errorType]);
  }

  firstByte(model: string, seconds: number): void {
    this.ttft.observe({ model }, seconds);
  }

  finished(model: string, seconds: number): void {
    this.duration.observe({ model }, seconds);
  }

  /** Removes every series of a model the registry no longer knows (issue 11: cardinality). */
  private async forget(model: string): Promise<void> {
    this.history.forget(model);
    for (const counts of this.counters) counts.forget(model);
    this.ttft.remove({ model });
    this.predictionErrors.remove({ model });
    this.exploredRequests.remove({ model });
    for (const reason of ['connect', 'reset', 'status_5xx'] as const) {
      this.retries.remove({ model, reason });
    }
    this.duration.remove({ model });
    // A request still running on a worker of the model decrements its gauge later: keep a
    // gauge that is not at 0, or it would come back negative.
    for (const gauge of [this.inflight, this.queued]) {
      const sample = (await gauge.get()).values.find((v) => v.labels.model === model);
      if (sample?.value === 0 && !this.registry.model(model)) gauge.remove({ model });
    }
  }
}
