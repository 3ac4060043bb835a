import { Client } from 'pg';
// Relative, not `@sluice/testkit`: the global setup imports this file too, outside jest's
// module mapping.
import { runMigrations } from '../../libs/testkit/src/apps';
import type { ProcessGroup } from '../../libs/testkit/src/process-group';

export const PG_ADMIN_URL =
  process.env.SLUICE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * A PostgreSQL database created and migrated once per run of e2e tests (`global-setup.ts`), for
 * `createMigratedDatabase` to copy. Unset (PostgreSQL was unreachable then, or the specs run
 * without the global setup), each database is migrated on its own.
 */
export const PG_TEMPLATE_ENV = 'SLUICE_TEST_PG_TEMPLATE';

export interface TestDatabase {
  name: string;
  /** Its URL, through another port (a proxy) when given. */
  url: (port?: number) => string;
  drop(): Promise<void>;
}

let databases = 0;

async function admin<T>(run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database for one test file; its name always contains `test`. With `template`, a copy
 * of that database (which nobody may be connected to) instead of an empty one.
 */
export async function createTestDatabase(prefix: string, template?: string): Promise<TestDatabase> {
  const adminUrl = new URL(PG_ADMIN_URL);
  if (!adminUrl.pathname.includes('test'))
    throw new Error(`refusing to run against ${adminUrl.pathname}: name lacks "test"`);
  // The counter: copies of a template come fast enough for two in one millisecond.
  const unique = `${process.pid}_${Date.now().toString(36)}_${databases++}`;
  const name = `${prefix}_test_${unique}`.toLowerCase();
  const from = template ? ` TEMPLATE "${template}"` : '';
  await admin((c) => c.query(`CREATE DATABASE "${name}"${from}`));
  const url = (port?: number): string => {
    const u = new URL(PG_ADMIN_URL);
    u.pathname = `/${name}`;
    if (port) u.port = String(port);
    return u.toString();
  };
  return {
    name,
    url,
    drop: () => dropDatabase(name),
  };
}

/** Drops a database of the tests, whoever is still connected to it. */
export async function dropDatabase(name: string): Promise<void> {
  await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/**
 * A fresh database with every migration applied: a copy of the run's migrated template
 * (`PG_TEMPLATE_ENV`) when there is one, else created empty and migrated by the project's
 * migrate app (through `group`, when given). Copying costs PostgreSQL a file copy; migrating
 * costs a start of the migrate app, about 1.5 s of CPU (several seconds on a busy machine).
 * What is in the copy is what the migrate app made: the same migrations, run once.
 */
export async function createMigratedDatabase(
  prefix: string,
  group?: ProcessGroup,
): Promise<TestDatabase> {
  const template = process.env[PG_TEMPLATE_ENV];
  if (template) return createTestDatabase(prefix, template);
  const db = await createTestDatabase(prefix);
  await runMigrations(db.url(), group);
  return db;
}

export async function queryRows<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}
