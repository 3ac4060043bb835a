import { Controller, Get, Header, Query } from '@nestjs/common';
import { EngineStateReader } from './engine-state.reader';
import { PROMETHEUS_CONTENT_TYPE, sampleNameFilter } from './prometheus-text.writer';
import { renderVllmMetrics } from './vllm-metrics.format';

/** Served with `--metrics-format vllm`: the worker's live load as vLLM exposes it. */
@Controller()
export class VllmMetricsController {
  constructor(private readonly state: EngineStateReader) {}

  @Get('metrics')
  @Header('Content-Type', PROMETHEUS_CONTENT_TYPE)
  metrics(@Query('name[]') names?: string | string[]): string {
    return renderVllmMetrics(this.state.read(), sampleNameFilter(names));
  }
}
