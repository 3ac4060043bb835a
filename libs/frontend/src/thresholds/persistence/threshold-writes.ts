import { EntityManager } from 'typeorm';
import { ModelThresholdEntity } from './entities/model-threshold.entity';
import { ThresholdAuditEntity } from './entities/threshold-audit.entity';
import { PendingReverts, revertAt } from './pending-reverts';
import {
  AuditEntry,
  AuditMeta,
  NO_VERSION,
  StoredState,
  ThresholdValues,
} from './threshold.repository';
import { toWire, valuesOf, wireOf } from './threshold-values';

/**
 * The statements of a change, run by the repository inside its transaction. Every change of a
 * model holds that model's row lock from its first statement to its COMMIT.
 */

/**
 * Concurrent changes to one model queue on this row lock, so each reads the previous one's
 * `after` (READ COMMITTED re-reads the row once the lock is granted) and takes its audit id
 * later: per model, audit ids increase in commit order and the newest `after` is the row.
 */
export async function lockRow(em: EntityManager, model: string): Promise<ModelThresholdEntity> {
  await em
    .createQueryBuilder()
    .insert()
    .into(ModelThresholdEntity)
    .values({ model })
    .orIgnore()
    .execute();
  return em
    .getRepository(ModelThresholdEntity)
    .createQueryBuilder('t')
    .setLock('pessimistic_write')
    .where('t.model = :model', { model })
    .getOneOrFail();
}

/** Is any revert due? One cheap read, so that a poll with nothing to do opens no transaction. */
export async function anyDue(em: EntityManager): Promise<boolean> {
  const row = await em
    .getRepository(ModelThresholdEntity)
    .createQueryBuilder('t')
    .select('t.model')
    .where('t.revertAt <= clock_timestamp()')
    .limit(1)
    .getOne();
  return row !== null;
}

/**
 * Locks the row of one model with a due revert. A row another replica holds (reverting it, or a
 * write in progress) is skipped; once that commits, its revert is no longer due or is found at
 * the next poll. The lock is the same one writes take, so no other order of locks exists.
 */
export function claimDue(em: EntityManager): Promise<ModelThresholdEntity | null> {
  return em
    .getRepository(ModelThresholdEntity)
    .createQueryBuilder('t')
    .setLock('pessimistic_write')
    .setOnLocked('skip_locked')
    .where('t.revertAt <= clock_timestamp()')
    .orderBy('t.revertAt', 'ASC')
    .limit(1)
    .getOne();
}

/** The audit row of a change; with `ttlSecs`, its expiry on the database's clock. */
export async function insertAudit(
  em: EntityManager,
  model: string,
  before: ThresholdValues,
  after: ThresholdValues,
  meta: AuditMeta,
  ttlSecs?: number,
): Promise<AuditEntry> {
  const row = {
    actor: meta.actor,
    model,
    before: toWire(before),
    after: toWire(after),
    source: meta.source,
    requestId: meta.requestId,
    reason: meta.reason ?? null,
  };
  const result = await em
    .createQueryBuilder()
    .insert()
    .into(ThresholdAuditEntity)
    // clock_timestamp(), not now(): the time the lock was granted, so `at` follows id order.
    // Milliseconds, the precision of the pending revert that carries the same time.
    .values({
      ...row,
      at: () => 'clock_timestamp()',
      expiresAt: () =>
        ttlSecs === undefined
          ? 'NULL'
          : "date_trunc('milliseconds', clock_timestamp()) + make_interval(secs => :ttlSecs)",
    })
    .setParameter('ttlSecs', ttlSecs ?? null)
    .returning(['id', 'at', 'expiresAt'])
    .execute();
  const { id, at, expires_at } = (
    result.raw as Array<{ id: string; at: Date; expires_at: Date | null }>
  )[0];
  return toEntry({ ...row, id: String(id), at, expiresAt: expires_at });
}

/** Writes a change's values, the model's new version and what remains to revert. */
export async function updateRow(
  em: EntityManager,
  model: string,
  after: ThresholdValues,
  version: string,
  pending: PendingReverts | null,
): Promise<void> {
  await em
    .createQueryBuilder()
    .update(ModelThresholdEntity)
    .set({
      ...after,
      lastAuditId: version,
      pendingReverts: pending,
      revertAt: revertAt(pending),
      updatedAt: () => 'now()',
    })
    .where('model = :model', { model })
    .execute();
}

export function stateOf(row: ModelThresholdEntity): StoredState {
  return { values: valuesOf(row), version: row.lastAuditId ?? NO_VERSION };
}

/** The one mapping of an audit row, as written or as read back, to an entry. */
export function toEntry(row: ThresholdAuditEntity): AuditEntry {
  return {
    id: row.id,
    at: row.at.toISOString(),
    actor: row.actor,
    model: row.model,
    before: wireOf(row.before),
    after: wireOf(row.after),
    source: row.source,
    requestId: row.requestId,
    reason: row.reason,
    expiresAt: row.expiresAt?.toISOString() ?? null,
  };
}
