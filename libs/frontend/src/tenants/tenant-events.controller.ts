import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { TENANT_CHANGED_EVENT, TENANT_USAGE_EVENT } from '@sluice/contracts';
import { TenantLimits } from './tenant-limits.service';
import { TenantSyncService } from './tenant-sync.service';

/** Tenant change notifications and consumption from other frontend replicas. */
@Controller()
export class TenantEventsController {
  constructor(
    private readonly sync: TenantSyncService,
    private readonly limits: TenantLimits,
  ) {}

  @EventPattern(TENANT_USAGE_EVENT)
  onUsage(@Payload() payload: unknown): void {
    this.limits.onPeerUsage(payload);
  }

  @EventPattern(TENANT_CHANGED_EVENT)
  onChanged(@Payload() payload: unknown): Promise<void> {
    return this.sync.onPeerChange(payload);
  }
}
