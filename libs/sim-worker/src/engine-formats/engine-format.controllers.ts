import { Type } from '@nestjs/common';
import { MetricsFormat } from '../config/worker-options';
import { SglangMetricsController } from './sglang-metrics.controller';
import { VllmMetricsController } from './vllm-metrics.controller';

/** The controllers a `--metrics-format` adds; without one, none of these routes exist. */
export function engineFormatControllers(format: MetricsFormat): Type[] {
  switch (format) {
    case 'none':
      return [];
    case 'vllm':
      return [VllmMetricsController];
    case 'sglang':
      return [SglangMetricsController];
  }
}
