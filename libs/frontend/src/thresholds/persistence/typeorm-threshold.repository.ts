import { DataSource, EntityManager } from 'typeorm';
import { ModelThresholdEntity } from './entities/model-threshold.entity';
import { ThresholdAuditEntity } from './entities/threshold-audit.entity';
import {
  AppliedChange,
  AuditEntry,
  AuditMeta,
  AuditPage,
  AuditQuery,
  InvalidAuditQueryError,
  ThresholdPatch,
  ThresholdRepository,
  ThresholdValues,
} from './threshold.repository';
import { isEmpty, merge, toWire, valuesOf, wireOf } from './threshold-values';

const INT8_MAX = 9223372036854775807n;

/** The only class that talks to the database; every query is parameterised. */
export class TypeOrmThresholdRepository extends ThresholdRepository {
  constructor(private readonly dataSource: DataSource) {
    super();
  }

  async loadAll(): Promise<Map<string, ThresholdValues>> {
    const rows = await this.dataSource
      .getRepository(ModelThresholdEntity)
      .createQueryBuilder('t')
      .where('t.activeDecodeBlocks IS NOT NULL')
      .orWhere('t.activePrefillTokens IS NOT NULL')
      .orWhere('t.activePrefillTokensFrac IS NOT NULL')
      .getMany();
    return new Map(rows.map((row) => [row.model, valuesOf(row)]));
  }

  /** `undefined` when nothing is stored for the model (no row, or every value cleared). */
  async load(model: string): Promise<ThresholdValues | undefined> {
    const row = await this.dataSource.getRepository(ModelThresholdEntity).findOneBy({ model });
    if (!row) return undefined;
    const values = valuesOf(row);
    return isEmpty(values) ? undefined : values;
  }

  applyChange(model: string, patch: ThresholdPatch, meta: AuditMeta): Promise<AppliedChange> {
    return this.dataSource.transaction(async (em) => {
      const before = await this.lockRow(em, model);
      const after = merge(before, patch);
      await em
        .createQueryBuilder()
        .update(ModelThresholdEntity)
        .set({ ...after, updatedAt: () => 'now()' })
        .where('model = :model', { model })
        .execute();
      const audit = await this.insertAudit(em, model, before, after, meta);
      return { before, after, audit };
    });
  }

  async listAudit(query: AuditQuery): Promise<AuditPage> {
    const { model, limit, before } = query;
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new InvalidAuditQueryError(`limit must be an integer >= 1, got ${limit}`);
    }
    // One row more than asked tells whether a next page exists without a COUNT.
    const qb = this.dataSource
      .getRepository(ThresholdAuditEntity)
      .createQueryBuilder('a')
      .orderBy('a.id', 'DESC')
      .limit(limit + 1);
    if (model !== undefined) qb.andWhere('a.model = :model', { model });
    if (before !== undefined) qb.andWhere('a.id < :before', { before: cursor(before) });
    const rows = await qb.getMany();
    const entries = rows.slice(0, limit).map(toEntry);
    const next = rows.length > limit ? entries[entries.length - 1].id : null;
    return { entries, next };
  }

  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
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
    const result = await em
      .createQueryBuilder()
      .insert()
      .into(ThresholdAuditEntity)
      .values({
        // clock_timestamp(), not now(): the time the lock was granted, so `at` follows id order.
        at: () => 'clock_timestamp()',
        actor: meta.actor,
        model,
        before: toWire(before),
        after: toWire(after),
        source: meta.source,
        requestId: meta.requestId,
      })
      .returning(['id', 'at'])
      .execute();
    const { id, at } = (result.raw as Array<{ id: string; at: Date }>)[0];
    return {
      id: String(id),
      at: at.toISOString(),
      actor: meta.actor,
      model,
      before: toWire(before),
      after: toWire(after),
      source: meta.source,
      requestId: meta.requestId,
    };
  }
}

function cursor(before: string): string {
  if (!/^[0-9]{1,30}$/.test(before)) {
    throw new InvalidAuditQueryError(`before must be a cursor returned as next, got '${before}'`);
  }
  // A cursor past the largest bigint means "from the newest"; bigint would reject it.
  return BigInt(before) > INT8_MAX ? INT8_MAX.toString() : before;
}

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
