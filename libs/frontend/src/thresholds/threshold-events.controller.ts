import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { BUSY_THRESHOLD_CHANGED_EVENT } from '@sluice/contracts';
import { ThresholdSyncService } from './threshold-sync.service';

/** Change notifications from other frontend replicas. */
@Controller()
export class ThresholdEventsController {
  constructor(private readonly sync: ThresholdSyncService) {}

  @EventPattern(BUSY_THRESHOLD_CHANGED_EVENT)
  onChanged(@Payload() payload: unknown): Promise<void> {
    return this.sync.onPeerChange(payload);
  }
}
