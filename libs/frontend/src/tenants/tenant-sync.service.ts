import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventPublisher } from '@sluice/bus';
import { subjectFor, TENANT_CHANGED_EVENT } from '@sluice/contracts';
import { randomUUID } from 'node:crypto';
import { FrontendConfig } from '../config/frontend-config';
import { TenantRepository } from '../thresholds/persistence';
import { TENANT_ID, TenantDirectory } from './tenant-directory.service';

/**
 * Keeps this replica's tenants equal to the database, the way thresholds are kept: a load at
 * start, a NATS notification from the replica that made a change, and a periodic full resync
 * (`--threshold-resync-ms`) for a lost notification.
 */
@Injectable()
export class TenantSyncService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Tenants');
  private readonly origin = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private resyncing = false;
  private stopped = false;

  constructor(
    private readonly config: FrontendConfig,
    private readonly directory: TenantDirectory,
    private readonly repository: TenantRepository,
    private readonly publisher: EventPublisher,
  ) {}

  /** Runs after the thresholds' bootstrap, which waits for the database (module order). */
  async onApplicationBootstrap(): Promise<void> {
    await this.resyncAll();
    this.logger.log(`loaded ${this.directory.size} tenant(s)`);
    this.timer = setInterval(() => void this.resyncAll(), this.config.thresholdResyncMs);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  announce(tenant: string): void {
    try {
      this.publisher.publish(subjectFor(this.config.namespace, TENANT_CHANGED_EVENT), {
        tenant,
        origin: this.origin,
      });
    } catch (err) {
      this.logger.warn(`could not announce the change of tenant '${tenant}': ${String(err)}`);
    }
  }

  /** Another replica changed a tenant: read it back now. A bad id costs no query. */
  async onPeerChange(payload: unknown): Promise<void> {
    const p = payload as { tenant?: unknown; origin?: unknown } | undefined;
    if (typeof p?.tenant !== 'string' || !TENANT_ID.test(p.tenant) || p.origin === this.origin) {
      return;
    }
    await this.reload(p.tenant);
  }

  /** Reads one tenant from the store and applies it (or forgets it). */
  async reload(id: string): Promise<void> {
    try {
      const record = await this.repository.load(id);
      if (record) this.directory.apply(record);
      else this.directory.forget(id);
    } catch (err) {
      this.logger.warn(`could not reload tenant '${id}': ${String(err)} (resync will retry)`);
    }
  }

  async resyncAll(): Promise<void> {
    if (this.resyncing || this.stopped) return;
    this.resyncing = true;
    try {
      const stored = await this.repository.loadAll();
      const ids = new Set(stored.map((t) => t.id));
      for (const id of this.directory.ids()) if (!ids.has(id)) this.directory.forget(id);
      for (const record of stored) this.directory.apply(record);
    } catch (err) {
      this.logger.warn(`tenant resync failed, keeping the last loaded tenants: ${String(err)}`);
    } finally {
      this.resyncing = false;
    }
  }
}
