import { Client } from 'pg';

export const PG_ADMIN_URL =
  process.env.SLUICE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  name: string;
  /** Its URL, through another port (a proxy) when given. */
  url: (port?: number) => string;
  drop(): Promise<void>;
}

/** A fresh database for one test file; its name always contains `test`. */
export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const admin = new URL(PG_ADMIN_URL);
  if (!admin.pathname.includes('test'))
    throw new Error(`refusing to run against ${admin.pathname}: name lacks "test"`);
  const name = `${prefix}_test_${process.pid}_${Date.now().toString(36)}`.toLowerCase();
  const client = new Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  const url = (port?: number): string => {
    const u = new URL(PG_ADMIN_URL);
    u.pathname = `/${name}`;
    if (port) u.port = String(port);
    return u.toString();
  };
  return {
    name,
    url,
    drop: async () => {
      const c = new Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
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
