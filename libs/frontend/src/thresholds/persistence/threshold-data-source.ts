import { resolve } from 'node:path';
import { DataSource, DataSourceOptions, Logger as TypeOrmLogger } from 'typeorm';
import { ALL_MIGRATIONS } from '@sluice/migrations';
import { ModelThresholdEntity } from './entities/model-threshold.entity';
import { TenantAuditEntity } from './entities/tenant-audit.entity';
import { TenantKeyEntity } from './entities/tenant-key.entity';
import { TenantEntity } from './entities/tenant.entity';
import { ThresholdAuditEntity } from './entities/threshold-audit.entity';
import { pgliteDriver } from './pglite.driver';

/** Structurally a Nest `Logger`, so callers need not know TypeORM's logger interface. */
export interface ThresholdStoreLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface ThresholdDataSourceOptions {
  /** PostgreSQL URL; `null` = the embedded database under `dataDir`. */
  databaseUrl: string | null;
  /** Where the embedded database keeps its files (`<dataDir>/pglite`); unused with a URL. */
  dataDir: string;
  logger?: ThresholdStoreLogger;
}

const SLOW_QUERY_MS = 1000;

/**
 * Client-side deadline of one query. A hung server (or a partition that drops packets) keeps a
 * connection open and answers nothing; without it a write or a resync would wait as long as the
 * outage lasts. Far above any real query here: 50 writers queued on one row lock take ms.
 */
export const QUERY_DEADLINE_MS = 2500;

class StoreLogger implements TypeOrmLogger {
  constructor(private readonly logger: ThresholdStoreLogger) {}

  logQuery(): void {}

  logQueryError(error: string | Error, query: string): void {
    this.logger.error(`query failed: ${error instanceof Error ? error.message : error}: ${query}`);
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn(`slow query (${time} ms): ${query}`);
  }

  logSchemaBuild(message: string): void {
    this.logger.log(message);
  }

  logMigration(message: string): void {
    this.logger.log(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.logger.warn(String(message));
    else this.logger.log(String(message));
  }
}

/**
 * The threshold store's DataSource (not yet initialised): PostgreSQL over `pg` with a URL,
 * otherwise an embedded PGlite database on disk under `dataDir`. Same entities and migrations
 * either way; the schema only ever changes through migrations, never `synchronize`.
 */
export function createThresholdDataSource(options: ThresholdDataSourceOptions): DataSource {
  const common = {
    type: 'postgres',
    entities: [
      ModelThresholdEntity,
      ThresholdAuditEntity,
      TenantEntity,
      TenantKeyEntity,
      TenantAuditEntity,
    ],
    migrations: ALL_MIGRATIONS,
    synchronize: false,
    migrationsRun: false,
    logger: options.logger ? new StoreLogger(options.logger) : undefined,
    maxQueryExecutionTime: SLOW_QUERY_MS,
  } as const;
  const specific: Partial<DataSourceOptions> = options.databaseUrl
    ? {
        url: options.databaseUrl,
        poolSize: 10,
        connectTimeoutMS: 3000,
        applicationName: 'sluice',
        // statement_timeout bounds a query stuck behind a lock on the server; query_timeout is
        // the client's own deadline, for a server that does not answer at all.
        extra: { statement_timeout: 10_000, query_timeout: QUERY_DEADLINE_MS, keepAlive: true },
      }
    : { driver: pgliteDriver(resolve(options.dataDir)) };
  return new DataSource({ ...common, ...specific } as DataSourceOptions);
}
