import { Module } from '@nestjs/common';
import { RequestMetricsModule } from '../request-metrics/request-metrics.module';
import { MonitorModule } from '../monitor/monitor.module';
import { ProxyService } from './proxy.service';
import { RouterService } from './router.service';
import { UpstreamClient } from './upstream.client';
import { WorkerTraffic } from './worker-traffic';

@Module({
  imports: [MonitorModule, RequestMetricsModule],
  providers: [WorkerTraffic, RouterService, UpstreamClient, ProxyService],
  exports: [WorkerTraffic, ProxyService],
})
export class RouterModule {}
