import { Module } from '@nestjs/common';
import { TenantsModule } from '../tenants/tenants.module';
import { ThresholdAdminModule } from '../threshold-admin/threshold-admin.module';
import { ThresholdsModule } from '../thresholds/thresholds.module';
import { TenantAdminGuard } from './tenant-admin.guard';
import { TenantAdminService } from './tenant-admin.service';
import { TenantsController } from './tenants.controller';

/** `/tenants` (docs/api.md#tenants): tenants, their keys and the audit log, admin only. */
@Module({
  imports: [TenantsModule, ThresholdsModule, ThresholdAdminModule],
  controllers: [TenantsController],
  providers: [TenantAdminService, TenantAdminGuard],
})
export class TenantAdminModule {}
