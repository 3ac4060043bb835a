import { Controller, Get, Header, ParseIntPipe, Query } from '@nestjs/common';
import { EngineStateReader } from './engine-state.reader';
import { PROMETHEUS_CONTENT_TYPE, sampleNameFilter } from './prometheus-text.writer';
import { SglangLoads, sglangLoads, sglangServerInfo } from './sglang-loads.format';
import { renderSglangMetrics } from './sglang-metrics.format';

/** Served with `--metrics-format sglang`: the worker's live load as SGLang exposes it. */
@Controller()
export class SglangMetricsController {
  constructor(private readonly state: EngineStateReader) {}

  @Get('v1/loads')
  loads(@Query('dp_rank', new ParseIntPipe({ optional: true })) dpRank?: number): SglangLoads {
    return sglangLoads(this.state.read(), dpRank);
  }

  /** `/get_server_info` is the name SGLang used before `/server_info`. */
  @Get(['server_info', 'get_server_info'])
  serverInfo(): Record<string, unknown> {
    return sglangServerInfo(this.state.read());
  }

  @Get('metrics')
  @Header('Content-Type', PROMETHEUS_CONTENT_TYPE)
  metrics(@Query('name[]') names?: string | string[]): string {
    return renderSglangMetrics(this.state.read(), sampleNameFilter(names));
  }
}
