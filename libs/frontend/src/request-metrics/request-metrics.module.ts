import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { WorkerMonitorModule } from '../worker-monitor/worker-monitor.module';
import { RequestMetricsService } from './request-metrics.service';

/**
 * Request-level metrics (contract §6), written by admission, the router, the proxy and the
 * error filter; their model labels are bounded by the models the worker monitor knows.
 */
@Module({
  imports: [MetricsModule, WorkerMonitorModule],
  providers: [RequestMetricsService],
  exports: [RequestMetricsService],
})
export class RequestMetricsModule {}
