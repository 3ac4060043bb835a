import type { DatabaseError } from 'pg';
import {
  DataSource,
  EntityManager,
  FindOptionsWhere,
  IsNull,
  Not,
  QueryFailedError,
  QueryRunner,
} from 'typeorm';
import { ModelThresholdEntity } from './entities/model-threshold.entity';
import { ThresholdAuditEntity } from './entities/threshold-audit.entity';
import {
  AppliedChange,
  AuditEntry,
  AuditMeta,
  AuditPage,
  AuditQuery,
  ChangeOutcomeUnknownError,
  InvalidAuditQueryError,
  ThresholdPatch,
  ThresholdRepository,
  ThresholdValues,
} from './threshold.repository';
import { THRESHOLD_KEYS } from '../busy-thresholds';
import { isEmpty, merge, toWire, valuesOf, wireOf } from './threshold-values';

const INT8_MAX = 9223372036854775807n;

/** The only class that talks to the database; every query is parameterised. */
export class TypeOrmThresholdRepository extends ThresholdRepository {
  /**
   * Only a server connection can be left mid-query by a reset or a deadline. The embedded
   * database (a custom `driver`) is one in-process session: closing its client would hand an
   * open transaction to the next caller.
   */
  private readonly closesBrokenConnections: boolean;

  constructor(private readonly dataSource: DataSource) {
    super();
    this.closesBrokenConnections = !(dataSource.options as { driver?: unknown }).driver;
  }

  loadAll(): Promise<Map<string, ThresholdValues>> {
    return this.withConnection(async (em) => {
      // Rows with at least one stored value: one `key IS NOT NULL` alternative per threshold.
      const anyStored: FindOptionsWhere<ModelThresholdEntity>[] = THRESHOLD_KEYS.map((key) => ({
        [key]: Not(IsNull()),
      }));
      const rows = await em.getRepository(ModelThresholdEntity).find({ where: anyStored });
      return new Map(rows.map((row) => [row.model, valuesOf(row)]));
    });
  }

  /** `undefined` when nothing is stored for the model (no row, or every value cleared). */
  load(model: string): Promise<ThresholdValues | undefined> {
    return this.withConnection(async (em) => {
      const row = await em.getRepository(ModelThresholdEntity).findOneBy({ model });
      if (!row) return undefined;
      const values = valuesOf(row);
      return isEmpty(values) ? undefined : values;
    });
  }

  /**
   * Runs the transaction on its own query runner so that a failure of the COMMIT itself (sent,
   * answer lost: the change may be stored) is told apart from a failure before it (rolled back,
   * or rolled back by the server when the broken connection goes away).
   */
  applyChange(model: string, patch: ThresholdPatch, meta: AuditMeta): Promise<AppliedChange> {
    return this.withConnection(async (em, runner) => {
      await runner.startTransaction();
      let applied: AppliedChange;
      try {
        const before = await this.lockRow(em, model);
        const after = merge(before, patch);
        await em
          .createQueryBuilder()
          .update(ModelThresholdEntity)
          .set({ ...after, updatedAt: () => 'now()' })
          .where('model = :model', { model })
          .execute();
        const audit = await this.insertAudit(em, model, before, after, meta);
        applied = { before, after, audit };
      } catch (err) {
        // On a broken server connection the rollback would only wait for the deadline again:
        // the server aborts the transaction when withConnection closes the connection.
        if (answeredByServer(err) || !this.closesBrokenConnections) {
          await runner.rollbackTransaction().catch(() => undefined);
        }
        throw err;
      }
      try {
        await runner.commitTransaction();
      } catch (err) {
        // The server refused the COMMIT: nothing stored. No answer at all: we cannot know.
        throw answeredByServer(err) ? err : new ChangeOutcomeUnknownError(err);
      }
      return applied;
    });
  }

  async listAudit(query: AuditQuery): Promise<AuditPage> {
    const { model, limit, before } = query;
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new InvalidAuditQueryError(`limit must be an integer >= 1, got ${limit}`);
    }
    const from = before === undefined ? undefined : cursor(before);
    return this.withConnection(async (em) => {
      // One row more than asked tells whether a next page exists without a COUNT.
      const qb = em
        .getRepository(ThresholdAuditEntity)
        .createQueryBuilder('a')
        .orderBy('a.id', 'DESC')
        .limit(limit + 1);
      if (model !== undefined) qb.andWhere('a.model = :model', { model });
      if (from !== undefined) qb.andWhere('a.id < :before', { before: from });
      const rows = await qb.getMany();
      const entries = rows.slice(0, limit).map(toEntry);
      const next = rows.length > limit ? entries[entries.length - 1].id : null;
      return { entries, next };
    });
  }

  ping(): Promise<void> {
    return this.withConnection(async (em) => {
      await em.query('SELECT 1');
    });
  }

  /**
   * Runs `work` on one pooled connection. A failure the server did not answer (a reset, the
   * client-side query deadline) may leave the connection mid-query: it is closed, not handed back
   * to the pool, so a hung database cannot make later callers queue behind a dead query.
   */
  private async withConnection<T>(
    work: (em: EntityManager, runner: QueryRunner) => Promise<T>,
  ): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    let broken = false;
    try {
      await runner.connect();
      return await work(runner.manager, runner);
    } catch (err) {
      broken = !answeredByServer(err);
      throw err;
    } finally {
      if (broken && this.closesBrokenConnections) closeConnection(runner);
      await runner.release().catch(() => undefined);
    }
  }

  /**
   * Concurrent changes to one model queue on this row lock, so each reads the previous one's
   * `after` (READ COMMITTED re-reads the row once the lock is granted) and takes its audit id
   * later: per model, audit ids increase in commit order and the newest `after` is the row.
   */
  private async lockRow(em: EntityManager, model: string): Promise<ThresholdValues> {
    await em
      .createQueryBuilder()
      .insert()
      .into(ModelThresholdEntity)
      .values({ model })
      .orIgnore()
      .execute();
    const row = await em
      .getRepository(ModelThresholdEntity)
      .createQueryBuilder('t')
      .setLock('pessimistic_write')
      .where('t.model = :model', { model })
      .getOneOrFail();
    return valuesOf(row);
  }

  private async insertAudit(
    em: EntityManager,
    model: string,
    before: ThresholdValues,
    after: ThresholdValues,
    meta: AuditMeta,
  ): Promise<AuditEntry> {
    const row = {
      actor: meta.actor,
      model,
      before: toWire(before),
      after: toWire(after),
      source: meta.source,
      requestId: meta.requestId,
    };
    const result = await em
      .createQueryBuilder()
      .insert()
      .into(ThresholdAuditEntity)
      // clock_timestamp(), not now(): the time the lock was granted, so `at` follows id order.
      .values({ ...row, at: () => 'clock_timestamp()' })
      .returning(['id', 'at'])
      .execute();
    const { id, at } = (result.raw as Array<{ id: string; at: Date }>)[0];
    return toEntry({ ...row, id: String(id), at });
  }
}

/**
 * An error the database server sent (pg's `DatabaseError`: a SQLSTATE and a severity), so the
 * connection itself is still sound. Duck-typed: the embedded database's errors come from its own
 * copy of pg's protocol module.
 */
function answeredByServer(err: unknown): boolean {
  const cause = (err instanceof QueryFailedError ? err.driverError : err) as
    Partial<Pick<DatabaseError, 'code' | 'severity'>> | undefined;
  return typeof cause?.code === 'string' && typeof cause.severity === 'string';
}

/** pg's `end()` destroys the socket when a query is still in flight (pg-pool then drops it). */
function closeConnection(runner: QueryRunner): void {
  const client = (runner as { databaseConnection?: { end?: () => Promise<void> } })
    .databaseConnection;
  client?.end?.().catch(() => undefined);
}

function cursor(before: string): string {
  if (!/^[0-9]{1,30}$/.test(before)) {
    throw new InvalidAuditQueryError(`before must be a cursor returned as next, got '${before}'`);
  }
  // A cursor past the largest bigint means "from the newest"; bigint would reject it.
  return BigInt(before) > INT8_MAX ? INT8_MAX.toString() : before;
}

/** The one mapping of an audit row, as written or as read back, to an entry. */
function toEntry(row: ThresholdAuditEntity): AuditEntry {
  return {
    id: row.id,
    at: row.at.toISOString(),
    actor: row.actor,
    model: row.model,
    before: wireOf(row.before),
    after: wireOf(row.after),
    source: row.source,
    requestId: row.requestId,
  };
}
