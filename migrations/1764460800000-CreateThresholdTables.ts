import { MigrationInterface, QueryRunner } from 'typeorm';

/** Per-model busy thresholds (contract §3.2) and the audit log of every change to them. */
export class CreateThresholdTables1764460800000 implements MigrationInterface {
  name = 'CreateThresholdTables1764460800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The CHECKs repeat the API's validation so a hand-edited row cannot disable admission.
    await queryRunner.query(`
      CREATE TABLE "model_thresholds" (
        "model" varchar(256) NOT NULL,
        "active_decode_blocks_threshold" double precision NULL,
        "active_prefill_tokens_threshold" bigint NULL,
        "active_prefill_tokens_threshold_frac" double precision NULL,
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "PK_model_thresholds" PRIMARY KEY ("model"),
        CONSTRAINT "CHK_model_thresholds_decode"
          CHECK ("active_decode_blocks_threshold" BETWEEN 0 AND 1),
        CONSTRAINT "CHK_model_thresholds_prefill"
          CHECK ("active_prefill_tokens_threshold" >= 0),
        CONSTRAINT "CHK_model_thresholds_prefill_frac"
          CHECK ("active_prefill_tokens_threshold_frac" >= 0
             AND "active_prefill_tokens_threshold_frac" < 'Infinity')
      )`);
    await queryRunner.query(`
      CREATE TABLE "threshold_audit" (
        "id" bigserial NOT NULL,
        "at" timestamptz NOT NULL DEFAULT now(),
        "actor" varchar(128) NOT NULL,
        "model" varchar(256) NOT NULL,
        "before" jsonb NOT NULL,
        "after" jsonb NOT NULL,
        "source" varchar(128) NOT NULL,
        "request_id" varchar(128) NULL,
        CONSTRAINT "PK_threshold_audit" PRIMARY KEY ("id")
      )`);
    // Serves `?model=` pages newest first: WHERE model = $1 AND id < $2 ORDER BY id DESC.
    await queryRunner.query(
      `CREATE INDEX "IDX_threshold_audit_model_id" ON "threshold_audit" ("model", "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "threshold_audit"`);
    await queryRunner.query(`DROP TABLE "model_thresholds"`);
  }
}
