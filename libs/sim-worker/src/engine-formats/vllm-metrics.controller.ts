import { Controller, Get, Header, Query } from '@nestjs/common';
import { WorkerConfig } from '../config/worker-config';
import { EngineStateReader } from './engine-state.reader';
import { PROMETHEUS_CONTENT_TYPE, sampleNameFilter } from './prometheus-text.writer';
import { renderVllmMetrics } from './vllm-metrics.format';

/** Served with `--metrics-format vllm`: the worker's live load as vLLM exposes it. */
@Controller()
export class VllmMetricsController {
  constructor(
    private readonly state: EngineStateReader,
    private readonly config: WorkerConfig,
  ) {}

  /**
   * The whole exposition whatever the query, as vLLM's API server sends it; with
   * `--honour-name-filter`, only the samples `name[]` asks for, as prometheus_client's own
   * exporter (older vLLM) does.
   */
  @Get('metrics')
  @Header('Content-Type', PROMETHEUS_CONTENT_TYPE)
  metrics(@Query('name[]') names?: string | string[]): string {
    const only = this.config.options.honourNameFilter ? sampleNameFilter(names) : undefined;
    return renderVllmMetrics(this.state.read(), only);
  }
}
