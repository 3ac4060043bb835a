import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createTestDatabase, PG_ADMIN_URL, queryRows } from './support/database';
import { spawnApp } from './support/processes';

const SCRIPT = join(__dirname, '..', 'docker', 'postgres-init', '10-sluice-role.sh');

/**
 * Issue 11, item 7: compose's frontends connect to PostgreSQL as a plain role that owns only
 * Sluice's tables. The postgres container's init script is run here against the real server, as
 * the container would run it, then the migrations run as that role.
 */
describe('the compose database role', () => {
  const role = `sluice_role_${process.pid}_${Date.now().toString(36)}`;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;

  beforeAll(async () => {
    db = await createTestDatabase('role');
  });
  afterAll(async () => {
    await db?.drop();
    await queryRows(PG_ADMIN_URL, `DROP ROLE IF EXISTS "${role}"`);
  });

  it('is no superuser, may not create databases or roles, and owns exactly the migrated tables', async () => {
    const admin = new URL(PG_ADMIN_URL);
    const init = spawnSync('sh', [SCRIPT], {
      encoding: 'utf8',
      env: {
        ...process.env,
        PGHOST: admin.hostname,
        PGPORT: admin.port || '5432',
        POSTGRES_USER: decodeURIComponent(admin.username) || 'postgres',
        POSTGRES_DB: db.name,
        SLUICE_DB_USER: role,
        SLUICE_DB_PASSWORD: 'role-test-password-1',
      },
    });
    expect(init.stderr).toBe('');
    expect(init.status).toBe(0);

    const asRole = new URL(db.url());
    asRole.username = role;
    asRole.password = 'role-test-password-1';
    const migrate = spawnApp('migrate', ['run', '--database-url', asRole.toString()]);
    expect(await migrate.exited).toBe(0);

    const [attrs] = await queryRows<Record<string, boolean>>(
      asRole.toString(),
      'SELECT rolsuper, rolcreatedb, rolcreaterole, rolbypassrls FROM pg_roles WHERE rolname = current_user',
    );
    expect(attrs).toEqual({
      rolsuper: false,
      rolcreatedb: false,
      rolcreaterole: false,
      rolbypassrls: false,
    });
    const owned = await queryRows<{ tablename: string; tableowner: string }>(
      asRole.toString(),
      "SELECT tablename, tableowner FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
    );
    expect(owned.map((t) => t.tablename)).toEqual([
      'migrations',
      'model_thresholds',
      'tenant_audit',
      'tenant_keys',
      'tenants',
      'threshold_audit',
    ]);
    expect(owned.every((t) => t.tableowner === role)).toBe(true);
    await expect(queryRows(asRole.toString(), 'CREATE ROLE sneaky')).rejects.toThrow(
      /permission denied/,
    );
  });
});
