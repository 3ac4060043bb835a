import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { RequestMetricsService } from '../metrics/request-metrics.service';
import { MonitorModule } from '../monitor/monitor.module';
import { ProxyService } from './proxy.service';
import { RouterService } from './router.service';
import { UpstreamClient } from './upstream.client';
import { WorkerTraffic } from './worker-traffic';

@Module({
  imports: [MetricsModule, MonitorModule],
  providers: [RequestMetricsService, WorkerTraffic, RouterService, UpstreamClient, ProxyService],
  exports: [RequestMetricsService, WorkerTraffic, ProxyService],
})
export class RouterModule {}
