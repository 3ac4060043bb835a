import { DataSource } from 'typeorm';
import { storeDataDir, waitFor } from '@sluice/testkit';
import {
  createThresholdDataSource,
  revertLastMigration,
  RevertedChange,
  runMigrations,
  ThresholdRepository,
  ThresholdValues,
  TypeOrmThresholdRepository,
  VersionMismatchError,
} from '../libs/frontend/src/thresholds/persistence';
import { META, NONE, pgliteStore, postgresStore, Store } from './support/threshold-store';

const SAFETY_MIGRATION = 'AddThresholdChangeSafety1796156400000';
/** The migrations after it, reverted first (newest first). */
const ADMISSION_MIGRATION = 'AddAdmissionControl1796157600000';
const TTFT_MIGRATION = 'AddTtftObjective1796158800000';
const TENANT_MIGRATION = 'CreateTenantTables1796160000000';
const values = (v: Partial<ThresholdValues>): ThresholdValues => ({ ...NONE, ...v });
/** Generous: a revert is due after 1 s; how soon it is found is not what these tests judge. */
const DEADLINE_MS = 30_000;

const postgres = (): Promise<Store> => postgresStore('sluice_safety');
/**
 * A copy of the run's migrated embedded database (`storeDataDir`): creating one costs about 10 s
 * of CPU, and these tests are about changes, not about migrating an empty database (that is
 * threshold-store.e2e-spec.ts). Migrating it again finds nothing pending.
 */
const pglite = (): Promise<Store> => pgliteStore(storeDataDir());

describe.each([
  ['PostgreSQL', postgres],
  ['PGlite', pglite],
])('safer threshold changes in the store on %s', (_name, open) => {
  let store: Store;
  let dataSource: DataSource;
  let sut: ThresholdRepository;

  beforeAll(async () => {
    store = await open();
    dataSource = createThresholdDataSource(store);
    await dataSource.initialize();
    await runMigrations(dataSource);
    sut = new TypeOrmThresholdRepository(dataSource);
  });
  afterAll(async () => {
    if (dataSource?.isInitialized) await dataSource.destroy();
    await store?.cleanUp();
  });
  beforeEach(() => dataSource.query('TRUNCATE model_thresholds, threshold_audit RESTART IDENTITY'));

  const auditRows = async (model: string) =>
    (await sut.listAudit({ model, limit: 100 })).entries.length;

  it('gives a model the id of its newest audit row as version, values cleared or not', async () => {
    expect(await sut.loadState('m')).toBeUndefined();
    const set = await sut.applyChange('m', { activeDecodeBlocks: 0.5 }, META);
    expect(await sut.loadState('m')).toEqual({ values: set.after, version: set.audit.id });
    const cleared = await sut.applyChange('m', { activeDecodeBlocks: null }, META);
    expect(BigInt(cleared.audit.id)).toBeGreaterThan(BigInt(set.audit.id));
    expect(await sut.loadState('m')).toEqual({ values: NONE, version: cleared.audit.id });
    expect([...(await sut.loadStates())]).toEqual([
      ['m', { values: NONE, version: cleared.audit.id }],
    ]);
  });

  it('applies a change whose If-Match holds, and refuses one that does not, changing nothing', async () => {
    const first = await sut.applyChange('m', { activeDecodeBlocks: 0.5 }, META);
    const matched = await sut.applyChange('m', { waitingRequests: 2 }, META, {
      ifMatch: { versions: ['999', first.audit.id] },
    });
    const stale = sut.applyChange('m', { activeDecodeBlocks: 0.1 }, META, {
      ifMatch: { versions: [first.audit.id] },
    });
    await expect(stale).rejects.toThrow(VersionMismatchError);
    await expect(stale).rejects.toMatchObject({
      current: { values: matched.after, version: matched.audit.id },
    });
    expect(await sut.loadState('m')).toEqual({ values: matched.after, version: matched.audit.id });
    expect(await auditRows('m')).toBe(2);
    // The refused transaction left the session usable (PGlite has only one).
    await expect(sut.applyChange('m', { waitingRequests: 3 }, META)).resolves.toBeDefined();
  });

  it('takes If-Match * as "was changed before": refused for a new model, leaving no row', async () => {
    const any = { ifMatch: { any: true } } as const;
    await expect(sut.applyChange('new', { waitingRequests: 1 }, META, any)).rejects.toThrow(
      VersionMismatchError,
    );
    expect(await sut.loadState('new')).toBeUndefined();
    await sut.applyChange('old', { waitingRequests: 1 }, META);
    await expect(sut.applyChange('old', { waitingRequests: 2 }, META, any)).resolves.toBeDefined();
  });

  it('stores reason and expiry with the audit row, and reverts the change once when it expires', async () => {
    await sut.applyChange('m', { activeDecodeBlocks: 0.9, waitingRequests: 4 }, META);
    const temp = await sut.applyChange(
      'm',
      { activeDecodeBlocks: 0.3, activePrefillTokens: 100 },
      { ...META, reason: 'load test' },
      { ttlSecs: 1 },
    );
    expect(temp.audit).toMatchObject({ reason: 'load test', expiresAt: expect.any(String) });
    const ttl = Date.parse(temp.audit.expiresAt ?? '') - Date.parse(temp.audit.at);
    expect(ttl).toBeGreaterThan(990);
    expect(ttl).toBeLessThan(1010);
    expect(await sut.revertDue()).toBeNull(); // not yet due

    const reverted = await waitFor(
      () => sut.revertDue().then((r) => r ?? undefined),
      'revert',
      DEADLINE_MS,
    );
    expect(reverted).toMatchObject({
      model: 'm',
      before: temp.after,
      after: values({ activeDecodeBlocks: 0.9, waitingRequests: 4 }),
      audit: {
        actor: 'system',
        source: 'ttl-expiry',
        requestId: null,
        reason: `expiry of the temporary change ${temp.audit.id}`,
        expiresAt: null,
      },
    });
    expect(await sut.revertDue()).toBeNull();
    expect(await sut.loadState('m')).toEqual({
      values: reverted.after,
      version: reverted.audit.id,
    });
    const [newest] = (await sut.listAudit({ model: 'm', limit: 10 })).entries;
    expect(newest).toEqual(reverted.audit);
    const lasting = (await sut.listAudit({ model: 'm', limit: 10 })).entries[2];
    expect(lasting).toMatchObject({ reason: null, expiresAt: null });
  });

  it('lets a later lasting write of a key keep its value; the keys it does not set still revert', async () => {
    await sut.applyChange('m', { activeDecodeBlocks: 0.9 }, META);
    await sut.applyChange('m', { activeDecodeBlocks: 0.3, waitingRequests: 1 }, META, {
      ttlSecs: 1,
    });
    await sut.applyChange('m', { waitingRequests: 6 }, META);
    const reverted = await waitFor(
      () => sut.revertDue().then((r) => r ?? undefined),
      'revert',
      DEADLINE_MS,
    );
    expect(reverted.after).toEqual(values({ activeDecodeBlocks: 0.9, waitingRequests: 6 }));
    await sut.applyChange('m', { activeDecodeBlocks: 0.3 }, META, { ttlSecs: 1 });
    await sut.applyChange('m', { activeDecodeBlocks: 0.4 }, META);
    const pending = await dataSource.query<{ r: unknown }[]>(
      'SELECT revert_at AS r FROM model_thresholds WHERE model = $1',
      ['m'],
    );
    expect(pending).toEqual([{ r: null }]);
  });

  it('returns a key changed temporarily twice to its value from before the first change', async () => {
    await sut.applyChange('m', { activeDecodeBlocks: 0.9 }, META);
    await sut.applyChange('m', { activeDecodeBlocks: 0.5 }, META, { ttlSecs: 3600 });
    await sut.applyChange('m', { activeDecodeBlocks: 0.4 }, META, { ttlSecs: 1 });
    const reverted = await waitFor(
      () => sut.revertDue().then((r) => r ?? undefined),
      'revert',
      DEADLINE_MS,
    );
    expect(reverted.after).toEqual(values({ activeDecodeBlocks: 0.9 }));
    expect(await sut.revertDue()).toBeNull();
  });

  it('reverts the migration (values and audit rows kept) and re-applies it, deriving versions from the audit log', async () => {
    const a = await sut.applyChange('a', { activeDecodeBlocks: 0.7 }, META);
    const b = await sut.applyChange('b', { waitingRequests: 2 }, META);
    const a2 = await sut.applyChange('a', { waitingRequests: 1 }, META);
    expect(await revertLastMigration(dataSource)).toBe(TENANT_MIGRATION);
    expect(await revertLastMigration(dataSource)).toBe(TTFT_MIGRATION);
    expect(await revertLastMigration(dataSource)).toBe(ADMISSION_MIGRATION);
    expect(await revertLastMigration(dataSource)).toBe(SAFETY_MIGRATION);
    try {
      const columns = await dataSource.query<{ name: string }[]>(
        `SELECT column_name AS name FROM information_schema.columns
          WHERE table_schema = current_schema()
            AND column_name IN ('last_audit_id', 'pending_reverts', 'revert_at', 'reason', 'expires_at')`,
      );
      expect(columns).toEqual([]);
    } finally {
      expect(await runMigrations(dataSource)).toEqual([
        SAFETY_MIGRATION,
        ADMISSION_MIGRATION,
        TTFT_MIGRATION,
        TENANT_MIGRATION,
      ]);
    }
    expect(await sut.loadState('a')).toEqual({ values: a2.after, version: a2.audit.id });
    expect(await sut.loadState('b')).toEqual({ values: b.after, version: b.audit.id });
    expect((await sut.listAudit({ model: 'a', limit: 10 })).entries.map((e) => e.id)).toEqual([
      a2.audit.id,
      a.audit.id,
    ]);
  });
});

/** Two replicas are two connection pools on one PostgreSQL database. */
describe('safer threshold changes with two connection pools on PostgreSQL', () => {
  let store: Store;
  const sources: DataSource[] = [];
  let one: ThresholdRepository;
  let two: ThresholdRepository;

  beforeAll(async () => {
    store = await postgres();
    for (let i = 0; i < 2; i++) {
      const ds = createThresholdDataSource(store);
      await ds.initialize();
      sources.push(ds);
    }
    await runMigrations(sources[0]);
    [one, two] = sources.map((ds) => new TypeOrmThresholdRepository(ds));
  });
  afterAll(async () => {
    for (const ds of sources) if (ds.isInitialized) await ds.destroy();
    await store?.cleanUp();
  });

  it('lets exactly one of two writes with the same If-Match win, every time', async () => {
    let version = (await one.applyChange('race', { waitingRequests: 0 }, META)).audit.id;
    for (let round = 1; round <= 20; round++) {
      const ifMatch = { versions: [version] };
      const outcomes = await Promise.allSettled([
        one.applyChange('race', { waitingRequests: round }, META, { ifMatch }),
        two.applyChange('race', { activeDecodeBlocks: round / 100 }, META, { ifMatch }),
      ]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o) => o.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost.map((o): unknown => o.reason)).toEqual([expect.any(VersionMismatchError)]);
      version = won[0].value.audit.id;
    }
    expect((await one.listAudit({ model: 'race', limit: 100 })).entries).toHaveLength(21);
  });

  it('reverts a temporary change exactly once when both poll for it at the same time', async () => {
    const temps = await Promise.all(
      ['x', 'y', 'z'].map((model) =>
        one.applyChange(model, { activeDecodeBlocks: 0.2 }, META, { ttlSecs: 1 }),
      ),
    );
    expect(temps.every((t) => t.audit.expiresAt !== null)).toBe(true);
    const reverted: RevertedChange[] = [];
    // Both poll together, round after round, as replicas do.
    await waitFor(
      async () => {
        const both = await Promise.all([one.revertDue(), two.revertDue()]);
        reverted.push(...both.filter((r) => r !== null));
        return reverted.length >= 3;
      },
      'three reverts',
      DEADLINE_MS,
    );
    for (let i = 0; i < 5; i++) {
      expect(await Promise.all([one.revertDue(), two.revertDue()])).toEqual([null, null]);
    }
    expect(reverted.map((r) => r.model).sort()).toEqual(['x', 'y', 'z']);
    const rows = await sources[0].query<{ n: string }[]>(
      "SELECT count(*) AS n FROM threshold_audit WHERE source = 'ttl-expiry'",
    );
    expect(rows).toEqual([{ n: '3' }]);
  });
});
