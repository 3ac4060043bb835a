import { Injectable } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter, Gauge, Histogram } from 'prom-client';
import { PRIORITY_CLASSES, PriorityClass } from '../config/priority';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import {
  ENDPOINT_LABELS,
  EndpointLabel,
  ErrorType,
  METRIC,
  SloSampleOutcome,
} from '../metrics/metric-names';
import { TrafficHistory } from './traffic-history';

const REQUEST_TYPES = ['stream', 'unary'] as const;
const SAMPLE_OUTCOMES: readonly SloSampleOutcome[] = ['met', 'missed', 'failed'];
const ERROR_TYPES: readonly ErrorType[] = [
  '',
  'overload',
  'validation',
  'not_found',
  'unavailable',
  'upstream',
  'internal',
];

/**
 * Request-level metrics of contract §6, with label values kept bounded: only known models
 * become label values, and a model's series go when the registry forgets the model. Admitted
 * and rejected requests also go to the status page's `TrafficHistory`.
 */
@Injectable()
export class RequestMetricsService {
  constructor(
    private readonly registry: WorkerRegistry,
    @InjectMetric(METRIC.rejections) private readonly rejections: Counter,
    @InjectMetric(METRIC.classRejections) private readonly classRejections: Counter,
    @InjectMetric(METRIC.requests) private readonly requests: Counter,
    @InjectMetric(METRIC.inflight) readonly inflight: Gauge,
    @InjectMetric(METRIC.queued) readonly queued: Gauge,
    @InjectMetric(METRIC.ttft) private readonly ttft: Histogram,
    @InjectMetric(METRIC.duration) private readonly duration: Histogram,
    private readonly history: TrafficHistory,
    @InjectMetric(METRIC.wouldRejections) private readonly wouldRejections: Counter,
    @InjectMetric(METRIC.sloRejections) private readonly sloRejections: Counter,
    @InjectMetric(METRIC.predictionError) private readonly predictionErrors: Histogram,
    @InjectMetric(METRIC.sloSamples) private readonly sloSamples: Counter,
  ) {
    registry.observe({ modelForgotten: (model) => void this.forget(model) });
  }

  /** A model name from a request body is user input: only known models become label values. */
  modelLabel(model: unknown): string {
    return typeof model === 'string' && this.registry.model(model) ? model : 'unknown';
  }

  /** One overload rejection: contract §6's counter and §8's, by priority class. */
  rejected(model: string, endpoint: EndpointLabel, priority: PriorityClass): void {
    this.rejections.inc({ model, endpoint });
    this.classRejections.inc({ model, endpoint, priority });
    this.history.rejected(model, priority);
  }

  /** A request goes to a worker: past admission and the router queue. */
  admitted(model: string): void {
    this.history.admitted(model);
  }

  /** Admitted in shadow mode although every worker of the model was busy (contract §8). */
  wouldReject(model: string, endpoint: EndpointLabel, priority: PriorityClass): void {
    this.wouldRejections.inc({ model, endpoint, priority });
  }

  /** An overload rejection because no free worker was predicted to meet the TTFT objective. */
  sloRejected(model: string, endpoint: EndpointLabel, priority: PriorityClass): void {
    this.sloRejections.inc({ model, endpoint, priority });
  }

  /** |predicted − actual| time to first token of an admitted request, in seconds. */
  predictionError(model: string, seconds: number): void {
    this.predictionErrors.observe({ model }, seconds);
  }

  /** How a would-be objective refusal admitted as a sample turned out. */
  sloSample(model: string, outcome: SloSampleOutcome): void {
    this.sloSamples.inc({ model, outcome });
  }

  answered(model: string, endpoint: EndpointLabel, stream: boolean, errorType: ErrorType): void {
    this.requests.inc({
      model,
      endpoint,
      request_type: stream ? 'stream' : 'unary',
      status: errorType === '' ? 'success' : 'error',
      error_type: errorType,
    });
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
    for (const endpoint of ENDPOINT_LABELS) {
      this.rejections.remove({ model, endpoint });
      for (const priority of PRIORITY_CLASSES) {
        this.classRejections.remove({ model, endpoint, priority });
        this.wouldRejections.remove({ model, endpoint, priority });
        this.sloRejections.remove({ model, endpoint, priority });
      }
      for (const request_type of REQUEST_TYPES) {
        for (const error_type of ERROR_TYPES) {
          const status = error_type === '' ? 'success' : 'error';
          this.requests.remove({ model, endpoint, request_type, status, error_type });
        }
      }
    }
    this.ttft.remove({ model });
    this.predictionErrors.remove({ model });
    for (const outcome of SAMPLE_OUTCOMES) this.sloSamples.remove({ model, outcome });
    this.duration.remove({ model });
    // A request still running on a worker of the model decrements its gauge later: keep a
    // gauge that is not at 0, or it would come back negative.
    for (const gauge of [this.inflight, this.queued]) {
      const sample = (await gauge.get()).values.find((v) => v.labels.model === model);
      if (sample?.value === 0 && !this.registry.model(model)) gauge.remove({ model });
    }
  }
}
