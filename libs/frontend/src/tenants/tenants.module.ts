import { Module } from '@nestjs/common';
import { ThresholdsModule } from '../thresholds/thresholds.module';
import { TransportModule } from '../transport/transport.module';
import { TenantDirectory } from './tenant-directory.service';
import { TenantEventsController } from './tenant-events.controller';
import { TenantIdentity } from './tenant-identity';
import { TenantSyncService } from './tenant-sync.service';

/**
 * Tenants at admission (docs/api.md#tenants): this replica's copy of the stored tenants and keys,
 * kept in sync with the database and the other replicas, and who a request is charged to.
 */
@Module({
  imports: [ThresholdsModule, TransportModule],
  controllers: [TenantEventsController],
  providers: [TenantDirectory, TenantSyncService, TenantIdentity],
  exports: [TenantDirectory, TenantSyncService, TenantIdentity],
})
export class TenantsModule {}
