import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { workerMetricProviders } from './worker-metrics.providers';
import { BusStateService } from '../ops/bus-state.service';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { KvMetricsController } from './kv-metrics.controller';
import { MonitorService } from './monitor.service';
import { WorkerRegistry } from './worker-registry.service';

/** The worker monitor: load reports in, per-model busy state out. */
@Module({
  imports: [MetricsModule],
  controllers: [KvMetricsController],
  providers: [
    ThresholdsService,
    WorkerRegistry,
    MonitorService,
    ...workerMetricProviders,
    BusStateService,
  ],
  exports: [ThresholdsService, WorkerRegistry, BusStateService],
})
export class MonitorModule {}
