import { Injectable } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter, Gauge, Histogram } from 'prom-client';
import { WorkerRegistry } from '../monitor/worker-registry.service';
import { EndpointLabel, ErrorType, METRIC } from './metric-names';

const ENDPOINTS: Record<string, EndpointLabel> = {
  '/v1/chat/completions': 'chat_completions',
  '/v1/completions': 'completions',
  '/v1/embeddings': 'embeddings',
};

export function endpointLabelFor(url: string): EndpointLabel | undefined {
  const q = url.indexOf('?');
  return ENDPOINTS[q === -1 ? url : url.slice(0, q)];
}

/** Request-level metrics of contract §6, with label values kept bounded. */
@Injectable()
export class RequestMetricsService {
  constructor(
    private readonly registry: WorkerRegistry,
    @InjectMetric(METRIC.rejections) private readonly rejections: Counter,
    @InjectMetric(METRIC.requests) private readonly requests: Counter,
    @InjectMetric(METRIC.inflight) readonly inflight: Gauge,
    @InjectMetric(METRIC.queued) readonly queued: Gauge,
    @InjectMetric(METRIC.ttft) private readonly ttft: Histogram,
    @InjectMetric(METRIC.duration) private readonly duration: Histogram,
  ) {}

  /** A model name from a request body is user input: only known models become label values. */
  modelLabel(model: unknown): string {
    return typeof model === 'string' && this.registry.model(model) ? model : 'unknown';
  }

  rejected(model: string, endpoint: EndpointLabel): void {
    this.rejections.inc({ model, endpoint });
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
}
