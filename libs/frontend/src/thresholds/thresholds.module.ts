import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { FrontendConfig } from '../config/frontend-config';
import { MetricsModule } from '../metrics/metrics.module';
import { TransportModule } from '../transport/transport.module';
import {
  createThresholdDataSource,
  TenantRepository,
  ThresholdRepository,
  TypeOrmTenantRepository,
  TypeOrmThresholdRepository,
} from './persistence';
import { ThresholdDatabase } from './persistence/threshold-database.service';
import { ThresholdEventsController } from './threshold-events.controller';
import { ThresholdExpiryService } from './threshold-expiry.service';
import { ThresholdSyncService } from './threshold-sync.service';
import { ThresholdsService } from './thresholds.service';

/**
 * The busy thresholds in force per model, and what keeps them: the database (with its
 * migrations), the load at start, the replica sync (NATS notifications and periodic resync),
 * and the revert of temporary changes when they expire.
 */
@Module({
  imports: [MetricsModule, TransportModule],
  controllers: [ThresholdEventsController],
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
    {
      provide: TenantRepository,
      inject: [DataSource],
      useFactory: (dataSource: DataSource) => new TypeOrmTenantRepository(dataSource),
    },
    ThresholdDatabase,
    ThresholdsService,
    ThresholdSyncService,
    ThresholdExpiryService,
  ],
  exports: [
    ThresholdsService,
    ThresholdSyncService,
    ThresholdDatabase,
    ThresholdRepository,
    TenantRepository,
  ],
})
export class ThresholdsModule {}
