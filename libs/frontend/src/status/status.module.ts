import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { WorkerMonitorModule } from '../worker-monitor/worker-monitor.module';
import { ThresholdsModule } from '../thresholds/thresholds.module';
import { CompletionsModule } from '../completions/completions.module';
import { RequestMetricsModule } from '../request-metrics/request-metrics.module';
import { HistoryService } from './history.service';
import { TtftPredictionModule } from '../ttft-prediction/ttft-prediction.module';
import { RejectionRateService } from './rejection-rate.service';
import { StatusController } from './status.controller';
import { StatusService } from './status.service';
import { TenantsModule } from '../tenants/tenants.module';
import { TenantStatus } from './tenant-status.service';

/**
 * `GET /ui`: a live page of workers, thresholds and rejections, with a chart of each model's
 * last 10 minutes, and (with `--status-page-tenants`) the tenants' shares and refusals; read-only.
 */
@Module({
  imports: [
    MetricsModule,
    ThresholdsModule,
    WorkerMonitorModule,
    RequestMetricsModule,
    CompletionsModule,
    TtftPredictionModule,
    TenantsModule,
  ],
  controllers: [StatusController],
  providers: [RejectionRateService, StatusService, HistoryService, TenantStatus],
})
export class StatusModule {}
