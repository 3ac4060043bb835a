import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tenants (docs/api.md#tenants): who a request is charged to, their limits and weight, their API
 * keys (SHA-256 digests only) and the audit log of every change to them.
 */
export class CreateTenantTables1796160000000 implements MigrationInterface {
  name = 'CreateTenantTables1796160000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The CHECKs repeat the API's validation so a hand-edited row cannot disable a limit.
    await queryRunner.query(`
      CREATE TABLE "tenants" (
        "id" varchar(64) NOT NULL,
        "weight" double precision NOT NULL DEFAULT 1,
        "requests_per_minute" bigint NULL,
        "tokens_per_minute" bigint NULL,
        "max_concurrency" integer NULL,
        "priority" varchar(16) NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "last_audit_id" bigint NULL,
        CONSTRAINT "PK_tenants" PRIMARY KEY ("id"),
        CONSTRAINT "CHK_tenants_weight" CHECK ("weight" > 0 AND "weight" <= 1000000),
        CONSTRAINT "CHK_tenants_rpm" CHECK ("requests_per_minute" >= 1),
        CONSTRAINT "CHK_tenants_tpm" CHECK ("tokens_per_minute" >= 1),
        CONSTRAINT "CHK_tenants_concurrency" CHECK ("max_concurrency" >= 1),
        CONSTRAINT "CHK_tenants_priority"
          CHECK ("priority" IN ('critical', 'standard', 'sheddable'))
      )`);
    await queryRunner.query(`
      CREATE TABLE "tenant_keys" (
        "key_id" varchar(32) NOT NULL,
        "tenant_id" varchar(64) NOT NULL,
        "key_hash" char(64) NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "PK_tenant_keys" PRIMARY KEY ("key_id"),
        CONSTRAINT "UQ_tenant_keys_hash" UNIQUE ("key_hash"),
        CONSTRAINT "FK_tenant_keys_tenant" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants" ("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_tenant_keys_tenant" ON "tenant_keys" ("tenant_id")`);
    await queryRunner.query(`
      CREATE TABLE "tenant_audit" (
        "id" bigserial NOT NULL,
        "at" timestamptz NOT NULL DEFAULT now(),
        "actor" varchar(128) NOT NULL,
        "tenant" varchar(64) NOT NULL,
        "action" varchar(32) NOT NULL,
        "before" jsonb NULL,
        "after" jsonb NULL,
        "source" varchar(128) NOT NULL,
        "request_id" varchar(128) NULL,
        "reason" varchar(512) NULL,
        CONSTRAINT "PK_tenant_audit" PRIMARY KEY ("id")
      )`);
    // Serves a tenant's pages newest first: WHERE tenant = $1 AND id < $2 ORDER BY id DESC.
    await queryRunner.query(
      `CREATE INDEX "IDX_tenant_audit_tenant_id" ON "tenant_audit" ("tenant", "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "tenant_audit"`);
    await queryRunner.query(`DROP TABLE "tenant_keys"`);
    await queryRunner.query(`DROP TABLE "tenants"`);
  }
}
