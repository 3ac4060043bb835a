import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Safer threshold changes (contract §8): a model's version for `ETag` / `If-Match`, temporary
 * changes that revert by themselves, and a reason and an expiry on every audit row.
 */
export class AddThresholdChangeSafety1796156400000 implements MigrationInterface {
  name = 'AddThresholdChangeSafety1796156400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // last_audit_id: the audit row of the model's newest change, its ETag (null: never changed).
    // pending_reverts: per threshold key, the value a temporary change returns to and when;
    // revert_at: the earliest of those times, what the replicas poll for.
    await queryRunner.query(`
      ALTER TABLE "model_thresholds"
        ADD COLUMN "last_audit_id" bigint NULL,
        ADD COLUMN "pending_reverts" jsonb NULL,
        ADD COLUMN "revert_at" timestamptz NULL`);
    // Rows changed before this migration get the version their audit log already implies.
    await queryRunner.query(`
      UPDATE "model_thresholds" t
         SET "last_audit_id" = (SELECT max(a."id") FROM "threshold_audit" a WHERE a."model" = t."model")`);
    await queryRunner.query(`
      ALTER TABLE "threshold_audit"
        ADD COLUMN "reason" varchar(512) NULL,
        ADD COLUMN "expires_at" timestamptz NULL`);
  }

  /**
   * Drops the versions, every pending revert (temporary values then stay) and the reasons and
   * expiries of the audit rows; the previous version ignores all of them.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "threshold_audit"
        DROP COLUMN "expires_at",
        DROP COLUMN "reason"`);
    await queryRunner.query(`
      ALTER TABLE "model_thresholds"
        DROP COLUMN "revert_at",
        DROP COLUMN "pending_reverts",
        DROP COLUMN "last_audit_id"`);
  }
}
