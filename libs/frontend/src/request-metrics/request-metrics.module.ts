import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { MonitorModule } from '../monitor/monitor.module';
import { RequestMetricsService } from './request-metrics.service';

/**
 * Request-level metrics (contract §6), written by admission, the router, the proxy and the
 * error filter; their model labels are bounded by the models the worker monitor knows.
 */
@Module({
  imports: [MetricsModule, MonitorModule],
  providers: [RequestMetricsService],
  exports: [RequestMetricsService],
})
export class RequestMetricsModule {}
