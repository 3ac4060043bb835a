import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The per-model TTFT objective (contract §8): refuse when no free worker is predicted to give the
 * first token within `ttft_slo_ms`; null = the global flag (`--ttft-slo-ms`).
 */
export class AddTtftObjective1796158800000 implements MigrationInterface {
  name = 'AddTtftObjective1796158800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Nullable, so existing rows keep "no per-model value"; the CHECK repeats the API's validation.
    await queryRunner.query(`
      ALTER TABLE "model_thresholds"
        ADD COLUMN "ttft_slo_ms" bigint NULL,
        ADD CONSTRAINT "CHK_model_thresholds_ttft_slo" CHECK ("ttft_slo_ms" >= 1)`);
  }

  /**
   * Drops the stored per-model objectives: every model follows the global flag again. Audit rows
   * keep the key in their `before`/`after` objects; the previous version reads those objects key
   * by key and ignores it.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "model_thresholds"
        DROP CONSTRAINT "CHK_model_thresholds_ttft_slo",
        DROP COLUMN "ttft_slo_ms"`);
  }
}
