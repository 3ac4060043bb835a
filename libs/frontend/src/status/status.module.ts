import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { WorkerMonitorModule } from '../worker-monitor/worker-monitor.module';
import { ThresholdsModule } from '../thresholds/thresholds.module';
import { CompletionsModule } from '../completions/completions.module';
import { TtftPredictionModule } from '../ttft-prediction/ttft-prediction.module';
import { RejectionRateService } from './rejection-rate.service';
import { StatusController } from './status.controller';
import { StatusService } from './status.service';

/** `GET /ui`: a live page of workers, thresholds and rejections, read-only. */
@Module({
  imports: [
    MetricsModule,
    ThresholdsModule,
    WorkerMonitorModule,
    CompletionsModule,
    TtftPredictionModule,
  ],
  controllers: [StatusController],
  providers: [RejectionRateService, StatusService],
})
export class StatusModule {}
