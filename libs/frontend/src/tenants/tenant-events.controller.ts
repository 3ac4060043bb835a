import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { TENANT_CHANGED_EVENT } from '@sluice/contracts';
import { TenantSyncService } from './tenant-sync.service';

/** Tenant change notifications from other frontend replicas. */
@Controller()
export class TenantEventsController {
  constructor(private readonly sync: TenantSyncService) {}

  @EventPattern(TENANT_CHANGED_EVENT)
  onChanged(@Payload() payload: unknown): Promise<void> {
    return this.sync.onPeerChange(payload);
  }
}
