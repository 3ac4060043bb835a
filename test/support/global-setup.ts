import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATA_TEMPLATE_ENV, runMigrations, TEMP_ROOT_ENV } from '../../libs/testkit/src/apps';
import { spawnApp } from '../../libs/testkit/src/process';
import { createTestDatabase, PG_TEMPLATE_ENV, TestDatabase } from './database';

/**
 * Once per run of e2e tests, before the first spec (jest's `globalSetup` of the e2e project):
 * a directory for the run's temporary files (`global-teardown.ts` removes it), and in it an
 * embedded database created and migrated by the project's migrate app. Apps started without a
 * store of their own get a copy of it (testkit's `storeDataDir`) instead of creating one each:
 * about 10 s of CPU per app. Beside it, on the other core, a migrated PostgreSQL database that
 * `createMigratedDatabase` copies instead of starting the migrate app for every database. The
 * variables reach the spec processes, which jest starts later.
 */
export default async function globalSetup(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'sluice-test-'));
  process.env[TEMP_ROOT_ENV] = root;
  const template = join(root, 'template');
  const migrate = spawnApp('migrate', ['run', '--data-dir', template]);
  const [code, pg] = await Promise.all([migrate.exited, pgTemplate()]);
  if (code !== 0) {
    await pg?.drop();
    throw new Error(
      `the template database (migrate run --data-dir) exited ${code}:\n${migrate.output}`,
    );
  }
  process.env[DATA_TEMPLATE_ENV] = template;
  if (pg) process.env[PG_TEMPLATE_ENV] = pg.name;
}

/**
 * The PostgreSQL template, made by the migrate app. Without it the specs still run (each
 * database is migrated on its own), so PostgreSQL being away is only worth a line here: the
 * specs that need it say so themselves.
 */
async function pgTemplate(): Promise<TestDatabase | undefined> {
  let db: TestDatabase | undefined;
  try {
    db = await createTestDatabase('sluice_template');
    await runMigrations(db.url());
    return db;
  } catch (err) {
    await db?.drop().catch(() => undefined);
    const why = err instanceof Error ? err.message : String(err);
    process.stderr.write(`e2e setup: no PostgreSQL template, each database is migrated: ${why}\n`);
    return undefined;
  }
}
