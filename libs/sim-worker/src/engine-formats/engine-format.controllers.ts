import { Provider, Type } from '@nestjs/common';
import { MetricsFormat } from '../config/worker-options';
import { SglangGaugeLog } from './sglang-gauge.log';
import { SglangMetricsController } from './sglang-metrics.controller';
import { VllmMetricsController } from './vllm-metrics.controller';

/** What a `--metrics-format` adds; without one, none of these routes exist. */
export function engineFormat(format: MetricsFormat): {
  controllers: Type[];
  providers: Provider[];
} {
  switch (format) {
    case 'none':
      return { controllers: [], providers: [] };
    case 'vllm':
      return { controllers: [VllmMetricsController], providers: [] };
    case 'sglang':
      return { controllers: [SglangMetricsController], providers: [SglangGaugeLog] };
  }
}
