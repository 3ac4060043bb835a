import { MigrationInterface, QueryRunner } from 'typeorm';

/** The fourth per-model threshold (contract §5): busy when num_requests_waiting exceeds it. */
export class AddWaitingRequestsThreshold1796083200000 implements MigrationInterface {
  name = 'AddWaitingRequestsThreshold1796083200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Nullable, so existing rows keep "no per-model value"; the CHECK repeats the API's validation.
    await queryRunner.query(`
      ALTER TABLE "model_thresholds"
        ADD COLUMN "waiting_requests_threshold" bigint NULL,
        ADD CONSTRAINT "CHK_model_thresholds_waiting" CHECK ("waiting_requests_threshold" >= 0)`);
  }

  /**
   * Drops the stored per-model values of this threshold. Audit rows keep the key in their
   * `before`/`after` objects; the previous version reads those objects key by key and ignores it.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "model_thresholds"
        DROP CONSTRAINT "CHK_model_thresholds_waiting",
        DROP COLUMN "waiting_requests_threshold"`);
  }
}
