import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import {
  AuditEntry,
  createThresholdDataSource,
  InvalidAuditQueryError,
  revertLastMigration,
  runMigrations,
  ThresholdRepository,
  ThresholdValues,
  TypeOrmThresholdRepository,
} from '../libs/frontend/src/thresholds/persistence';
import { createTestDatabase, queryRows } from './support/database';
import { META, NONE, pgliteStore, postgresStore, Store } from './support/threshold-store';

const MIGRATION = 'CreateThresholdTables1764460800000';
const WAITING_MIGRATION = 'AddWaitingRequestsThreshold1796083200000';
const SAFETY_MIGRATION = 'AddThresholdChangeSafety1796156400000';
const ADMISSION_MIGRATION = 'AddAdmissionControl1796157600000';
const TTFT_MIGRATION = 'AddTtftObjective1796158800000';
const TENANT_MIGRATION = 'CreateTenantTables1796160000000';
const MIGRATIONS = [
  MIGRATION,
  WAITING_MIGRATION,
  SAFETY_MIGRATION,
  ADMISSION_MIGRATION,
  TTFT_MIGRATION,
  TENANT_MIGRATION,
];
const wire = (v: ThresholdValues) => ({
  active_decode_blocks_threshold: v.activeDecodeBlocks,
  active_prefill_tokens_threshold: v.activePrefillTokens,
  active_prefill_tokens_threshold_frac: v.activePrefillTokensFrac,
  waiting_requests_threshold: v.waitingRequests,
  admission_control: v.admissionControl,
  ttft_slo_ms: v.ttftSloMs,
});

const postgres = (): Promise<Store> => postgresStore('sluice_store');
/** An empty data directory: the first start migrates it. */
const pglite = (): Promise<Store> => pgliteStore(mkdtempSync(join(tmpdir(), 'sluice-pglite-')));

async function allAudit(sut: ThresholdRepository, model?: string, limit = 3) {
  const pages: AuditEntry[][] = [];
  let before: string | undefined;
  do {
    const page = await sut.listAudit({ model, limit, before });
    pages.push(page.entries);
    before = page.next ?? undefined;
  } while (before !== undefined);
  return pages;
}

describe.each([
  ['PostgreSQL', postgres],
  ['PGlite', pglite],
])('threshold store on %s', (_name, open) => {
  let store: Store;
  let dataSource: DataSource;
  let sut: ThresholdRepository;
  let appliedOnEmpty: string[];

  async function connect(): Promise<string[]> {
    dataSource = createThresholdDataSource(store);
    await dataSource.initialize();
    sut = new TypeOrmThresholdRepository(dataSource);
    return runMigrations(dataSource);
  }

  beforeAll(async () => {
    store = await open();
    appliedOnEmpty = await connect();
  });

  afterAll(async () => {
    if (dataSource?.isInitialized) await dataSource.destroy();
    await store?.cleanUp();
  });

  beforeEach(() => dataSource.query('TRUNCATE model_thresholds, threshold_audit RESTART IDENTITY'));

  it('migrates an empty database, then has nothing pending', async () => {
    expect(appliedOnEmpty).toEqual(MIGRATIONS);
    const tables = await dataSource.query<{ name: string }[]>(
      `SELECT table_name AS name FROM information_schema.tables
        WHERE table_schema = current_schema() ORDER BY 1`,
    );
    expect(tables.map((t) => t.name)).toEqual([
      'migrations',
      'model_thresholds',
      'tenant_audit',
      'tenant_keys',
      'tenants',
      'threshold_audit',
    ]);
    expect(await runMigrations(dataSource)).toEqual([]);
    await expect(sut.ping()).resolves.toBeUndefined();
  });

  // The entity's threshold columns and CHECKs are derived from the table of keys; the schema
  // comes from hand-written migrations. Synchronising would reveal any difference as SQL.
  it('has entities that match the migrated schema: synchronising would change nothing', async () => {
    const diff = await dataSource.driver.createSchemaBuilder().log();
    expect(diff.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('sets, merges (absent keys unchanged) and clears (null) per-model values', async () => {
    const set = await sut.applyChange(
      'm',
      { activeDecodeBlocks: 0.9, activePrefillTokens: 5e9 },
      META,
    );
    expect(set.before).toEqual(NONE);
    expect(set.after).toEqual({ ...NONE, activeDecodeBlocks: 0.9, activePrefillTokens: 5e9 });

    const merged = await sut.applyChange(
      'm',
      { activePrefillTokensFrac: 1.5, waitingRequests: 4 },
      META,
    );
    expect(merged.after).toEqual({
      activeDecodeBlocks: 0.9,
      activePrefillTokens: 5e9,
      activePrefillTokensFrac: 1.5,
      waitingRequests: 4,
      admissionControl: null,
      ttftSloMs: null,
    });

    const cleared = await sut.applyChange('m', { activeDecodeBlocks: null }, META);
    expect(cleared.after).toEqual({ ...merged.after, activeDecodeBlocks: null });
    expect(await sut.load('m')).toEqual(cleared.after);
    expect(cleared.audit).toMatchObject({
      ...META,
      model: 'm',
      before: wire(merged.after),
      after: wire(cleared.after),
    });
    expect(new Date(cleared.audit.at).toISOString()).toBe(cleared.audit.at);
    expect((await sut.listAudit({ limit: 1 })).entries).toEqual([cleared.audit]);
  });

  it('stores, audits with four keys, and clears the waiting-requests threshold', async () => {
    const set = await sut.applyChange('w', { waitingRequests: 2 }, META);
    expect(set.after).toEqual({ ...NONE, waitingRequests: 2 });
    expect(await sut.load('w')).toEqual({ ...NONE, waitingRequests: 2 });
    expect([...(await sut.loadAll())]).toEqual([['w', { ...NONE, waitingRequests: 2 }]]);
    const stored = await dataSource.query<{ v: string }[]>(
      'SELECT waiting_requests_threshold AS v FROM model_thresholds WHERE model = $1',
      ['w'],
    );
    expect(stored.map((r) => Number(r.v))).toEqual([2]);

    const cleared = await sut.applyChange('w', { waitingRequests: null }, META);
    expect(cleared.after).toEqual(NONE);
    expect(await sut.load('w')).toBeUndefined();
    const [newest, oldest] = (await sut.listAudit({ model: 'w', limit: 10 })).entries;
    expect(oldest.before).toEqual(wire(NONE));
    expect(oldest.after).toEqual(wire({ ...NONE, waitingRequests: 2 }));
    expect(newest.before).toEqual(wire({ ...NONE, waitingRequests: 2 }));
    expect(Object.keys(newest.after).sort()).toEqual(Object.keys(wire(NONE)).sort());
  });

  it('refuses a negative waiting-requests threshold in the database itself', async () => {
    await expect(
      dataSource.query(
        `INSERT INTO model_thresholds (model, waiting_requests_threshold) VALUES ('bad', -1)`,
      ),
    ).rejects.toThrow(/CHK_model_thresholds_waiting/);
  });

  it('reads an audit row written before the fourth threshold existed with every key', async () => {
    await dataSource.query(
      `INSERT INTO threshold_audit (actor, model, "before", "after", source)
       VALUES ('old', 'legacy', $1, $2, '10.0.0.1')`,
      [
        JSON.stringify({
          active_decode_blocks_threshold: null,
          active_prefill_tokens_threshold: null,
          active_prefill_tokens_threshold_frac: null,
        }),
        JSON.stringify({
          active_decode_blocks_threshold: 0.5,
          active_prefill_tokens_threshold: null,
          active_prefill_tokens_threshold_frac: null,
        }),
      ],
    );
    const [entry] = (await sut.listAudit({ model: 'legacy', limit: 1 })).entries;
    expect(entry.before).toEqual(wire(NONE));
    expect(entry.after).toEqual(wire({ ...NONE, activeDecodeBlocks: 0.5 }));
  });

  it('stores, audits and clears a per-model admission mode, a word the column checks', async () => {
    const set = await sut.applyChange('a', { admissionControl: 'shadow' }, META);
    expect(set.after).toEqual({ ...NONE, admissionControl: 'shadow' });
    expect(await sut.load('a')).toEqual({ ...NONE, admissionControl: 'shadow' });
    expect([...(await sut.loadAll())]).toEqual([['a', { ...NONE, admissionControl: 'shadow' }]]);
    expect(set.audit.after).toEqual({ ...wire(NONE), admission_control: 'shadow' });
    const cleared = await sut.applyChange('a', { admissionControl: null }, META);
    expect(cleared.after).toEqual(NONE);
    expect(await sut.load('a')).toBeUndefined();
    const [newest] = (await sut.listAudit({ model: 'a', limit: 10 })).entries;
    expect(newest.before).toEqual({ ...wire(NONE), admission_control: 'shadow' });
    await expect(
      dataSource.query(
        `INSERT INTO model_thresholds (model, admission_control) VALUES ('b', 'on')`,
      ),
    ).rejects.toThrow(/CHK_model_thresholds_admission_control/);
  });

  it('stores, audits and clears a per-model TTFT objective, checked by the column', async () => {
    const set = await sut.applyChange('t', { ttftSloMs: 500 }, META);
    expect(set.after).toEqual({ ...NONE, ttftSloMs: 500 });
    expect(await sut.load('t')).toEqual({ ...NONE, ttftSloMs: 500 });
    expect(set.audit.after).toEqual({ ...wire(NONE), ttft_slo_ms: 500 });
    const cleared = await sut.applyChange('t', { ttftSloMs: null }, META);
    expect(cleared.after).toEqual(NONE);
    const [newest] = (await sut.listAudit({ model: 't', limit: 10 })).entries;
    expect(newest.before).toEqual({ ...wire(NONE), ttft_slo_ms: 500 });
    await expect(
      dataSource.query(`INSERT INTO model_thresholds (model, ttft_slo_ms) VALUES ('u', 0)`),
    ).rejects.toThrow(/CHK_model_thresholds_ttft_slo/);
  });

  it('reverts the newest migrations one by one (other values kept) and re-applies them', async () => {
    await sut.applyChange(
      'kept',
      { activeDecodeBlocks: 0.7, waitingRequests: 5, admissionControl: 'none' },
      META,
    );
    const column = (name: string) =>
      dataSource.query<{ name: string }[]>(
        `SELECT column_name AS name FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = 'model_thresholds'
            AND column_name = $1`,
        [name],
      );
    const checks = () =>
      dataSource.query<{ conname: string }[]>(
        `SELECT conname FROM pg_constraint WHERE conname IN
           ('CHK_model_thresholds_waiting', 'CHK_model_thresholds_admission_control')`,
      );
    expect(await column('waiting_requests_threshold')).toHaveLength(1);
    expect(await column('admission_control')).toHaveLength(1);
    // The migrations after it go first, newest first.
    const reverted: Array<string | null> = [];
    try {
      while (reverted.length < MIGRATIONS.length && reverted.at(-1) !== WAITING_MIGRATION) {
        reverted.push(await revertLastMigration(dataSource));
        if (reverted.at(-1) === TENANT_MIGRATION) {
          expect(await column('ttft_slo_ms')).toHaveLength(1);
        }
        if (reverted.at(-1) === TTFT_MIGRATION) {
          expect(await column('ttft_slo_ms')).toHaveLength(0);
          expect(await column('admission_control')).toHaveLength(1);
        }
        if (reverted.at(-1) === ADMISSION_MIGRATION) {
          expect(await column('admission_control')).toHaveLength(0);
          expect(await column('waiting_requests_threshold')).toHaveLength(1);
        }
      }
      expect(reverted).toEqual(MIGRATIONS.slice(MIGRATIONS.indexOf(WAITING_MIGRATION)).reverse());
      expect(await column('waiting_requests_threshold')).toHaveLength(0);
      const rows = await dataSource.query<{ model: string; d: number }[]>(
        'SELECT model, active_decode_blocks_threshold AS d FROM model_thresholds',
      );
      expect(rows).toEqual([{ model: 'kept', d: 0.7 }]);
      expect(await checks()).toEqual([]);
    } finally {
      expect(await runMigrations(dataSource)).toEqual([...reverted].reverse());
    }
    expect(await column('waiting_requests_threshold')).toHaveLength(1);
    expect(await column('admission_control')).toHaveLength(1);
    expect(await checks()).toHaveLength(2);
    // Re-applied: the columns are back, empty, and usable.
    expect(await sut.load('kept')).toEqual({ ...NONE, activeDecodeBlocks: 0.7 });
    const again = await sut.applyChange(
      'kept',
      { waitingRequests: 1, admissionControl: 'shadow' },
      META,
    );
    expect(again.after).toEqual({
      ...NONE,
      activeDecodeBlocks: 0.7,
      waitingRequests: 1,
      admissionControl: 'shadow',
    });
  });

  it('loadAll and load omit models whose values are all null', async () => {
    await sut.applyChange('kept', { activePrefillTokens: 0 }, META);
    await sut.applyChange('cleared', { activeDecodeBlocks: 0.5 }, META);
    await sut.applyChange('cleared', { activeDecodeBlocks: null }, META);
    await sut.applyChange('never-set', { activePrefillTokensFrac: null }, META);

    expect([...(await sut.loadAll())]).toEqual([['kept', { ...NONE, activePrefillTokens: 0 }]]);
    expect(await sut.load('cleared')).toBeUndefined();
    expect(await sut.load('unknown')).toBeUndefined();
  });

  it('keeps values and audit rows across closing and re-opening the data source', async () => {
    const { after, audit } = await sut.applyChange('m', { activeDecodeBlocks: 0.25 }, META);
    await dataSource.destroy();

    expect(await connect()).toEqual([]);
    expect(await sut.load('m')).toEqual(after);
    expect((await sut.listAudit({ limit: 10 })).entries).toEqual([audit]);
  });

  it('lists k changes newest first, in pages of 3 without loss or duplicates', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) {
      ids.push((await sut.applyChange('paged', { activePrefillTokens: i }, META)).audit.id);
      if (i % 2 === 0) await sut.applyChange('other', { activePrefillTokens: i }, META);
    }
    const pages = await allAudit(sut, 'paged');
    expect(pages.map((p) => p.length)).toEqual([3, 3, 3]);
    expect(pages.flat().map((e) => e.id)).toEqual([...ids].reverse());
    expect(pages[0][0].after.active_prefill_tokens_threshold).toBe(8);

    const everything = (await allAudit(sut)).flat().map((e) => BigInt(e.id));
    expect(everything).toHaveLength(14);
    expect(everything).toEqual([...everything].sort((a, b) => (a > b ? -1 : 1)));
    expect(new Set(everything).size).toBe(14);
    await expect(sut.listAudit({ limit: 3, before: 'abc' })).rejects.toThrow(
      InvalidAuditQueryError,
    );
  });

  it('serialises 50 concurrent changes to one model: 50 audit rows, stored == newest after', async () => {
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        sut.applyChange(
          'hot',
          i % 2 ? { activePrefillTokens: i } : { activeDecodeBlocks: i / 100 },
          { ...META, requestId: `req-${i}` },
        ),
      ),
    );
    const audit = (await allAudit(sut, 'hot', 100)).flat();
    expect(audit).toHaveLength(50);
    expect(wire((await sut.load('hot')) ?? NONE)).toEqual(audit[0].after);
    // Every change saw the one committed just before it: no lost update.
    for (let j = 0; j < 49; j++) expect(audit[j].before).toEqual(audit[j + 1].after);
    expect(audit[49].before).toEqual(wire(NONE));
  });

  it('leaves neither the change nor an audit row when the transaction fails', async () => {
    await sut.applyChange('m', { activeDecodeBlocks: 0.5 }, META);
    const tooLong = { ...META, actor: 'x'.repeat(129) };

    await expect(sut.applyChange('m', { activeDecodeBlocks: 0.7 }, tooLong)).rejects.toThrow(
      /too long/,
    );
    await expect(sut.applyChange('new', { activePrefillTokens: 1 }, tooLong)).rejects.toThrow(
      /too long/,
    );

    expect(await sut.load('m')).toEqual({ ...NONE, activeDecodeBlocks: 0.5 });
    const rows = await dataSource.query<{ model: string }[]>('SELECT model FROM model_thresholds');
    expect(rows).toEqual([{ model: 'm' }]);
    expect((await sut.listAudit({ limit: 10 })).entries).toHaveLength(1);
    // The session is usable again (PGlite has one session; it must not be left in a failed transaction).
    await expect(sut.applyChange('m', { activeDecodeBlocks: 0.8 }, META)).resolves.toBeDefined();
  });
});

describe('migration CLI (dist/apps/migrate/main.js)', () => {
  const ROOT = join(__dirname, '..');
  const CLI = join(ROOT, 'dist', 'apps', 'migrate', 'main.js');
  const CLI_TIMEOUT_MS = 120_000;

  function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
    return new Promise<{ code: number; out: string }>((resolve) => {
      // Generous: creating an embedded database took 30 s on the busy 2-core machine.
      const opts = { cwd: ROOT, env: { ...process.env, ...env }, timeout: CLI_TIMEOUT_MS };
      execFile(process.execPath, [CLI, ...args], opts, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, out: stdout + stderr });
      });
    });
  }

  /** Runs the CLI and expects exit code 0 and output matching `pattern`. */
  async function ok(args: string[], pattern: RegExp, env: NodeJS.ProcessEnv = {}) {
    expect(await cli(args, env)).toEqual({ code: 0, out: expect.stringMatching(pattern) });
  }

  beforeAll(() => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  });

  // The three tests share nothing (each has its own database or directory) and each is a chain
  // of CLI runs, one after another: the chains run side by side, on both cores when free.
  it.concurrent(
    'runs, reverts and runs again on an empty PostgreSQL database',
    async () => {
      const db = await createTestDatabase('sluice_cli');
      const tables = async () =>
        queryRows(db.url(), `SELECT 1 FROM pg_tables WHERE tablename LIKE '%threshold%'`);
      const waitingColumn = async () =>
        queryRows(
          db.url(),
          `SELECT 1 FROM information_schema.columns
          WHERE table_name = 'model_thresholds' AND column_name = 'waiting_requests_threshold'`,
        );
      const url = ['--database-url', db.url()];
      try {
        await ok(
          ['run', ...url],
          new RegExp(
            `applied ${MIGRATION}[\\s\\S]*${WAITING_MIGRATION}[\\s\\S]*${SAFETY_MIGRATION}[\\s\\S]*${ADMISSION_MIGRATION}[\\s\\S]*${TTFT_MIGRATION}[\\s\\S]*${TENANT_MIGRATION}`,
          ),
        );
        expect(await tables()).toHaveLength(2);
        expect(await waitingColumn()).toHaveLength(1);
        await ok(['run', ...url], /up to date/);
        await ok(['revert', ...url], new RegExp(`reverted ${TENANT_MIGRATION}`));
        await ok(['revert', ...url], new RegExp(`reverted ${TTFT_MIGRATION}`));
        await ok(['revert', ...url], new RegExp(`reverted ${ADMISSION_MIGRATION}`));
        expect(await waitingColumn()).toHaveLength(1);
        await ok(['revert', ...url], new RegExp(`reverted ${SAFETY_MIGRATION}`));
        await ok(['revert', ...url], new RegExp(`reverted ${WAITING_MIGRATION}`));
        expect(await tables()).toHaveLength(2);
        expect(await waitingColumn()).toHaveLength(0);
        await ok(['revert', ...url], new RegExp(`reverted ${MIGRATION}`));
        expect(await tables()).toHaveLength(0);
        await ok(['revert'], /nothing to revert/, { SLUICE_DATABASE_URL: db.url() });
        await ok(['run', ...url], new RegExp(`applied ${MIGRATION}`));
        expect(await tables()).toHaveLength(2);
        expect(await waitingColumn()).toHaveLength(1);
      } finally {
        await db.drop();
      }
    },
    5 * CLI_TIMEOUT_MS,
  );

  it.concurrent(
    'migrates the embedded database in --data-dir, and refuses one that is open',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
      const args = ['run', '--data-dir', dataDir];
      const env = { SLUICE_DATABASE_URL: '' };
      const running = createThresholdDataSource({ databaseUrl: null, dataDir });
      try {
        await ok(args, new RegExp(`applied ${MIGRATION}`), env);
        await ok(args, /up to date/, env);
        // Two PGlite instances on one directory would corrupt it: the second opener must fail.
        await running.initialize();
        const busy = await cli(args, env);
        expect(busy.code).toBe(1);
        expect(busy.out).toContain(`already open in process ${process.pid}`);
      } finally {
        if (running.isInitialized) await running.destroy();
        rmSync(dataDir, { recursive: true });
      }
    },
    5 * CLI_TIMEOUT_MS,
  );

  it.concurrent(
    'exits 1 with a clear message when the database is unreachable, 2 on bad usage',
    async () => {
      const down = await cli(['run', '--database-url', 'postgres://u:secret@127.0.0.1:1/x_test']);
      expect(down.code).toBe(1);
      expect(down.out).toMatch(/cannot open PostgreSQL at 127\.0\.0\.1:1\/x_test: .*ECONNREFUSED/);
      expect(down.out).not.toContain('secret');

      const usage = await cli(['sideways']);
      expect(usage.code).toBe(2);
      expect(usage.out).toMatch(/unknown command 'sideways'[\s\S]*usage:/);
    },
  );
});
