import { Module } from '@nestjs/common';
import { WorkerMonitorModule } from '../worker-monitor/worker-monitor.module';
import { ThresholdsModule } from '../thresholds/thresholds.module';
import { AdminAuthGuard } from './admin-auth.guard';
import { BusyThresholdController } from './busy-threshold.controller';
import { ThresholdAdminService } from './threshold-admin.service';

/** `/busy_threshold` (docs/api.md#busy-thresholds): read and change per-model thresholds, with the audit log. */
@Module({
  imports: [ThresholdsModule, WorkerMonitorModule],
  controllers: [BusyThresholdController],
  providers: [ThresholdAdminService, AdminAuthGuard],
  exports: [ThresholdAdminService, AdminAuthGuard],
})
export class ThresholdAdminModule {}
