import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { FrontendConfig } from '../config/frontend-config';
import { MetricsModule } from '../metrics/metrics.module';
import { MonitorModule } from '../monitor/monitor.module';
import { AdminAuthGuard } from './admin-auth.guard';
import { BusyThresholdController } from './busy-threshold.controller';
import {
  createThresholdDataSource,
  ThresholdRepository,
  TypeOrmThresholdRepository,
} from './persistence';
import { ThresholdAdminService } from './threshold-admin.service';
import { ThresholdDatabase } from './persistence/threshold-database.service';
import { ThresholdEventsController } from './threshold-events.controller';
import { ThresholdSyncService } from './threshold-sync.service';

/** Per-model thresholds as managed configuration: REST, audit log, persistence, replica sync. */
@Module({
  imports: [MonitorModule, MetricsModule],
  controllers: [BusyThresholdController, ThresholdEventsController],
  providers: [
    {
      provide: DataSource,
      inject: [FrontendConfig],
      useFactory: (config: FrontendConfig) =>
        createThresholdDataSource({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }),
    },
    {
      provide: ThresholdRepository,
      inject: [DataSource],
      useFactory: (dataSource: DataSource) => new TypeOrmThresholdRepository(dataSource),
    },
    ThresholdDatabase,
    ThresholdSyncService,
    ThresholdAdminService,
    AdminAuthGuard,
  ],
  exports: [ThresholdSyncService, ThresholdDatabase, ThresholdRepository],
})
export class ThresholdsModule {}
