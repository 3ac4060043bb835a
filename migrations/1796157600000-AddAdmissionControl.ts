import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The per-model admission mode (contract §8): `token-capacity` refuses when every worker is busy,
 * `shadow` only counts what would be refused, `none` admits everything; null = the global flag.
 */
export class AddAdmissionControl1796157600000 implements MigrationInterface {
  name = 'AddAdmissionControl1796157600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Nullable, so existing rows keep "no per-model value"; the CHECK repeats the API's validation.
    await queryRunner.query(`
      ALTER TABLE "model_thresholds"
        ADD COLUMN "admission_control" text NULL,
        ADD CONSTRAINT "CHK_model_thresholds_admission_control"
          CHECK ("admission_control" IN ('token-capacity', 'shadow', 'none'))`);
  }

  /**
   * Drops the stored per-model modes: every model follows the global flag again. Audit rows keep
   * the key in their `before`/`after` objects; the previous version reads those objects key by
   * key and ignores it.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "model_thresholds"
        DROP CONSTRAINT "CHK_model_thresholds_admission_control",
        DROP COLUMN "admission_control"`);
  }
}
