import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { RequestMetricsService } from '../metrics/request-metrics.service';
import { MonitorModule } from '../monitor/monitor.module';
import { ProxyService } from './proxy.service';
import { RouterService } from './router.service';
import { UpstreamClient } from './upstream.client';

@Module({
  imports: [MetricsModule, MonitorModule],
  providers: [RequestMetricsService, RouterService, UpstreamClient, ProxyService],
  exports: [RequestMetricsService, ProxyService],
})
export class RouterModule {}
