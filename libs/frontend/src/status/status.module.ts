import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { MonitorModule } from '../monitor/monitor.module';
import { RouterModule } from '../router/router.module';
import { RejectionRateService } from './rejection-rate.service';
import { StatusController } from './status.controller';
import { StatusService } from './status.service';

/** `GET /ui`: a live page of workers, thresholds and rejections, read-only. */
@Module({
  imports: [MetricsModule, MonitorModule, RouterModule],
  controllers: [StatusController],
  providers: [RejectionRateService, StatusService],
})
export class StatusModule {}
