import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { FrontendConfig } from '../../config/frontend-config';
import { DataDirLockedError } from './data-dir.lock';
import { pendingMigrations, runMigrations } from './threshold-migrations';
import { DataSource } from 'typeorm';

export type RetryNotice = (attempt: number, delayMs: number, reason: string) => void;

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 10_000;

/**
 * Owns the database connection's life: connects at start with capped exponential backoff,
 * saying what it waits for; the embedded database is migrated at start, PostgreSQL must have
 * been migrated by `npm run migration:run` (a pending migration is waited for, not applied).
 */
@Injectable()
export class ThresholdDatabase implements OnModuleDestroy {
  constructor(
    private readonly config: FrontendConfig,
    private readonly dataSource: DataSource,
  ) {}

  get embedded(): boolean {
    return this.config.databaseUrl === null;
  }

  describe(): string {
    if (this.embedded) return `embedded database in ${this.config.dataDir}`;
    const url = new URL(this.config.databaseUrl as string);
    return `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`;
  }

  async ready(onRetry: RetryNotice): Promise<void> {
    const since = Date.now();
    for (
      let attempt = 1, delay = FIRST_DELAY_MS;
      ;
      attempt++, delay = Math.min(delay * 2, MAX_DELAY_MS)
    ) {
      try {
        await this.connect();
        return;
      } catch (err) {
        const locked = lockedBy(err);
        // Another live process holds the embedded database: waiting on it forever, without
        // listening, looks like a hang; after --data-dir-wait-ms the start fails naming it.
        if (locked && Date.now() - since >= this.config.dataDirWaitMs) {
          throw new Error(
            `${locked.message}; gave up after --data-dir-wait-ms ${this.config.dataDirWaitMs}: stop process ${locked.pid} or give another --data-dir`,
          );
        }
        onRetry(
          attempt,
          delay,
          `${this.describe()}: ${err instanceof Error ? err.message : String(err)}`,
        );
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  async onModuleDestroy(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }

  private async connect(): Promise<void> {
    if (!this.dataSource.isInitialized) await this.dataSource.initialize();
    if (this.embedded) {
      await runMigrations(this.dataSource);
      return;
    }
    const pending = await pendingMigrations(this.dataSource);
    if (pending.length > 0) {
      throw new Error(`pending migrations (${pending.join(', ')}): run \`npm run migration:run\``);
    }
  }
}

/** The lock error behind a failed connection (TypeORM may wrap what the driver threw). */
function lockedBy(err: unknown): DataDirLockedError | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof DataDirLockedError) return e;
  }
  return null;
}
