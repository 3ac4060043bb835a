import { Module } from '@nestjs/common';
import { ThresholdsModule } from '../thresholds/thresholds.module';
import { TransportModule } from '../transport/transport.module';
import { TenantDirectory } from './tenant-directory.service';
import { TenantEventsController } from './tenant-events.controller';
import { TenantIdentity } from './tenant-identity';
import { TenantSyncService } from './tenant-sync.service';
import { TenantLimits } from './tenant-limits.service';
import { MetricsModule } from '../metrics/metrics.module';

/**
 * Tenants at admission (docs/api.md#tenants): this replica's copy of the stored tenants and keys,
 * kept in sync with the database and the other replicas, and who a request is charged to.
 */
@Module({
  imports: [ThresholdsModule, TransportModule, MetricsModule],
  controllers: [TenantEventsController],
  providers: [TenantDirectory, TenantSyncService, TenantIdentity, TenantLimits],
  exports: [TenantDirectory, TenantSyncService, TenantIdentity, TenantLimits],
})
export class TenantsModule {}
