import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { MonitorModule } from '../monitor/monitor.module';
import { ThresholdsModule } from '../thresholds/thresholds.module';
import { RouterModule } from '../router/router.module';
import { RejectionRateService } from './rejection-rate.service';
import { StatusController } from './status.controller';
import { StatusService } from './status.service';

/** `GET /ui`: a live page of workers, thresholds and rejections, read-only. */
@Module({
  imports: [MetricsModule, ThresholdsModule, MonitorModule, RouterModule],
  controllers: [StatusController],
  providers: [RejectionRateService, StatusService],
})
export class StatusModule {}
