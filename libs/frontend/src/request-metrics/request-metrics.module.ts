import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { WorkerMonitorModule } from '../worker-monitor/worker-monitor.module';
import { LoadSampler } from './load-sampler.service';
import { RequestMetricsService } from './request-metrics.service';
import { TrafficHistory } from './traffic-history';

/**
 * Request-level metrics (docs/metrics.md), written by admission, the router, the proxy and the
 * error filter; their model labels are bounded by the models the worker monitor knows. Also
 * the last 10 minutes of each model's traffic and load, which the status page draws.
 */
@Module({
  imports: [MetricsModule, WorkerMonitorModule],
  providers: [
    RequestMetricsService,
    { provide: TrafficHistory, useFactory: () => new TrafficHistory() },
    LoadSampler,
  ],
  exports: [RequestMetricsService, TrafficHistory],
})
export class RequestMetricsModule {}
