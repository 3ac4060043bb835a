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
import { schedule, takeDue } from './pending-reverts';
import {
  AppliedChange,
  AuditMeta,
  AuditPage,
  AuditQuery,
  ChangeOptions,
  ChangeOutcomeUnknownError,
  InvalidAuditQueryError,
  RevertedChange,
  satisfies,
  StoredState,
  ThresholdPatch,
  ThresholdRepository,
  ThresholdValues,
  VersionMismatchError,
} from './threshold.repository';
import { THRESHOLD_KEYS } from '../busy-thresholds';
import { isEmpty, merge, valuesOf } from './threshold-values';
import {
  anyDue,
  claimDue,
  insertAudit,
  lockRow,
  stateOf,
  toEntry,
  updateRow,
} from './threshold-writes';

/** Who the audit log names for a revert that no client asked for. */
const EXPIRY_META = { actor: 'system', source: 'ttl-expiry', requestId: null } as const;

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
  async load(model: string): Promise<ThresholdValues | undefined> {
    const state = await this.loadState(model);
    return state && !isEmpty(state.values) ? state.values : undefined;
  }

  loadStates(): Promise<Map<string, StoredState>> {
    return this.withConnection(async (em) => {
      const rows = await em.getRepository(ModelThresholdEntity).find();
      return new Map(rows.map((row) => [row.model, stateOf(row)]));
    });
  }

  loadState(model: string): Promise<StoredState | undefined> {
    return this.withConnection(async (em) => {
      const row = await em.getRepository(ModelThresholdEntity).findOneBy({ model });
      return row ? stateOf(row) : undefined;
    });
  }

  applyChange(
    model: string,
    patch: ThresholdPatch,
    meta: AuditMeta,
    options: ChangeOptions = {},
  ): Promise<AppliedChange> {
    return this.inTransaction(async (em) => {
      const row = await lockRow(em, model);
      const current = stateOf(row);
      if (options.ifMatch && !satisfies(options.ifMatch, current.version)) {
        throw new VersionMismatchError(model, current);
      }
      const before = current.values;
      const after = merge(before, patch);
      const audit = await insertAudit(em, model, before, after, meta, options.ttlSecs);
      const expiry =
        audit.expiresAt === null ? null : { audit: audit.id, at: new Date(audit.expiresAt) };
      const pending = schedule(row.pendingReverts, patch, before, expiry);
      await updateRow(em, model, after, audit.id, pending);
      return { before, after, audit };
    });
  }

  async revertDue(): Promise<RevertedChange | null> {
    if (!(await this.withConnection(anyDue))) return null;
    return this.inTransaction(async (em) => {
      const row = await claimDue(em);
      if (!row?.revertAt) return null;
      const due = takeDue(row.pendingReverts, row.revertAt);
      const before = valuesOf(row);
      const after = merge(before, due.patch);
      const reason = `expiry of the temporary change ${due.audits.join(', ')}`;
      const audit = await insertAudit(em, row.model, before, after, { ...EXPIRY_META, reason });
      await updateRow(em, row.model, after, audit.id, due.remaining);
      return { model: row.model, before, after, audit };
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
   * Runs `work` in a transaction on its own query runner, so that a failure of the COMMIT itself
   * (sent, answer lost: the change may be stored) is told apart from a failure before it (rolled
   * back, or rolled back by the server when the broken connection goes away).
   */
  private inTransaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.withConnection(async (em, runner) => {
      await runner.startTransaction();
      let result: T;
      try {
        result = await work(em);
      } catch (err) {
        // On a broken server connection the rollback would only wait for the deadline again:
        // the server aborts the transaction when withConnection closes the connection.
        if (connectionSound(err) || !this.closesBrokenConnections) {
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
      return result;
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
      broken = !connectionSound(err);
      throw err;
    } finally {
      if (broken && this.closesBrokenConnections) closeConnection(runner);
      await runner.release().catch(() => undefined);
    }
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

/** The connection is still in step with the server: it answered, or we refused before asking. */
function connectionSound(err: unknown): boolean {
  return answeredByServer(err) || err instanceof VersionMismatchError;
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
