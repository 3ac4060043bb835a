import { Controller, Get, Header, ParseIntPipe, Query } from '@nestjs/common';
import { EngineStateReader } from './engine-state.reader';
import { PROMETHEUS_CONTENT_TYPE } from './prometheus-text.writer';
import { SglangGaugeLog } from './sglang-gauge.log';
import { SglangLoads, sglangLoads, sglangServerInfo } from './sglang-loads.format';
import { renderSglangMetrics } from './sglang-metrics.format';

/** Served with `--metrics-format sglang`: the worker's load as SGLang exposes it. */
@Controller()
export class SglangMetricsController {
  constructor(
    private readonly state: EngineStateReader,
    private readonly gauges: SglangGaugeLog,
  ) {}

  /** Computed when asked, as SGLang's scheduler does. */
  @Get('v1/loads')
  loads(@Query('dp_rank', new ParseIntPipe({ optional: true })) dpRank?: number): SglangLoads {
    return sglangLoads(this.state.read(), dpRank);
  }

  /** `/get_server_info` is the name SGLang used before `/server_info`. */
  @Get(['server_info', 'get_server_info'])
  serverInfo(): Record<string, unknown> {
    return sglangServerInfo(this.state.read());
  }

  /**
   * The gauges as last written (see SglangGaugeLog), the token counters live. SGLang's exporter
   * (prometheus_client over a multiprocess registry) answers a `name[]` filter with nothing.
   */
  @Get('metrics')
  @Header('Content-Type', PROMETHEUS_CONTENT_TYPE)
  metrics(@Query('name[]') names?: string | string[]): string {
    if (names !== undefined) return '';
    const state = this.state.read();
    const written = this.gauges.read(state.readAtMs);
    const ranks = state.ranks.map((live, rank) => ({
      ...written[rank],
      promptTokensTotal: live.promptTokensTotal,
      generationTokensTotal: live.generationTokensTotal,
    }));
    return renderSglangMetrics({ ...state, ranks });
  }
}
