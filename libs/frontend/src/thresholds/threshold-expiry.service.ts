import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { toWire } from './threshold-wire';
import { RevertedChange, ThresholdRepository } from './persistence';
import { ThresholdSyncService } from './threshold-sync.service';

/** How often each replica looks for a due revert: the precision of a TTL, beside propagation. */
export const EXPIRY_POLL_MS = 500;
/** Reverts done in one poll at most, so a backlog (after every replica was down) yields. */
const MAX_REVERTS_PER_POLL = 100;

/**
 * Reverts temporary threshold changes (`ttl_secs`) when they expire. The expiry lives in the
 * database, so it survives restarts of every replica; each replica polls, and the row lock that
 * every change of a model takes (skipped when held) lets exactly one of them revert it. The
 * revert then reaches this replica at once and the others like any change.
 */
@Injectable()
export class ThresholdExpiryService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Thresholds');
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private stopped = false;
  private failing = false;

  constructor(
    private readonly repository: ThresholdRepository,
    private readonly sync: ThresholdSyncService,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.poll(), EXPIRY_POLL_MS);
    this.timer.unref();
  }

  /**
   * Not waiting for a poll in flight: the database closes beside this, and a poll queued for the
   * embedded database's one connection would then never be served. Its transaction is atomic.
   */
  onModuleDestroy(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** One poll at a time: a hung database holds one pooled connection, not one per tick. */
  poll(): Promise<void> {
    if (this.polling || this.stopped || !this.sync.loadedOnce) return this.polling ?? done;
    this.polling = this.revertAllDue().finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async revertAllDue(): Promise<void> {
    try {
      for (let n = 0; n < MAX_REVERTS_PER_POLL && !this.stopped; n++) {
        const reverted = await this.repository.revertDue();
        if (!reverted) break;
        this.apply(reverted);
      }
      if (this.failing) this.logger.log('temporary threshold changes are reverted again');
      this.failing = false;
    } catch (err) {
      // The store being away is logged by the resync; say it once here, retry every poll.
      if (!this.failing && !this.stopped) {
        this.logger.warn(
          `cannot revert expired temporary changes yet (will retry): ${String(err)}`,
        );
      }
      this.failing = true;
    }
  }

  private apply({ model, before, after, audit }: RevertedChange): void {
    this.sync.applyLocal(model, after, audit.id);
    this.logger.log(
      `thresholds of '${model}' reverted (${audit.reason}): ` +
        `${JSON.stringify(toWire(before))} -> ${JSON.stringify(toWire(after))} (audit ${audit.id})`,
    );
    this.sync.announce(model);
  }
}

const done = Promise.resolve();
