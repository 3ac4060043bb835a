import { PGlite } from '@electric-sql/pglite';
import { PglitePgConnection } from '@electric-sql/pglite/node-postgres';
import { join } from 'node:path';
import * as pg from 'pg';
import { DataDirLock } from './data-dir.lock';

/** PGlite's file-system errors are Emscripten `ErrnoError`s with no message. */
function describeStartError(err: unknown): string {
  if (err instanceof Error && err.message) return err.message;
  const { name, errno } = (err ?? {}) as { name?: string; errno?: number };
  return errno === undefined ? String(err) : `${name ?? 'error'} (WASI errno ${errno})`;
}

/** Reports a PGlite that failed to start as a connection error instead of an unhandled rejection. */
class PgliteConnection extends PglitePgConnection {
  constructor(
    config: { pglite: PGlite },
    private readonly dir: string,
  ) {
    super(config);
  }

  override async connect(port: number, host: string): Promise<void> {
    try {
      await super.connect(port, host);
    } catch (err) {
      const reason = describeStartError(err);
      this.emit('error', new Error(`cannot start the embedded database in ${this.dir}: ${reason}`));
    }
  }
}

type Callback = (err?: Error) => void;

/**
 * The `pg` module TypeORM's postgres driver should use (its `driver` option) for an embedded
 * PGlite database in `dataDir`. Each pool TypeORM creates (one per `initialize()`) opens its own
 * PGlite instance and closes it in `end()`.
 *
 * PGlite is one Postgres session, so the pool has exactly one client: `connect()` hands it out
 * exclusively until `release()`, and concurrent transactions queue instead of interleaving their
 * BEGIN/COMMIT on the shared session. Queries travel as wire protocol through pg's own `Client`
 * (PGlite's node-postgres bridge), so results are parsed exactly as from a PostgreSQL server.
 */
export function pgliteDriver(dataDir: string): typeof pg {
  class PglitePool extends pg.Pool {
    private readonly pglite: PGlite;
    private readonly lock: DataDirLock;

    constructor(options?: pg.PoolConfig) {
      const lock = DataDirLock.acquire(dataDir, join(dataDir, 'pglite.lock'));
      const dir = join(dataDir, 'pglite');
      const pglite = new PGlite(dir);
      class PgliteClient extends pg.Client {
        constructor(config?: pg.ClientConfig) {
          super({
            ...config,
            connection: new PgliteConnection({ pglite }, dir),
          } as pg.ClientConfig);
        }
      }
      super({
        ...options,
        max: 1,
        // The one client lives as long as the pool; a queued caller waits for it, never times out.
        idleTimeoutMillis: 0,
        connectionTimeoutMillis: 0,
        Client: PgliteClient as unknown as new () => pg.ClientBase,
      });
      this.pglite = pglite;
      this.lock = lock;
      // A PGlite that cannot start leaves nothing behind, so a later initialize() can retry.
      pglite.waitReady.catch(() => lock.release());
    }

    override end(): Promise<void>;
    override end(callback: () => void): void;
    override end(callback?: Callback): Promise<void> | void {
      const done = super
        .end()
        .then(() => this.closePglite())
        .finally(() => this.lock.release());
      if (!callback) return done;
      done.then(() => callback(), callback);
    }

    private async closePglite(): Promise<void> {
      const started = await this.pglite.waitReady.then(
        () => true,
        () => false,
      );
      if (started && !this.pglite.closed) await this.pglite.close();
    }
  }
  return { ...pg, Pool: PglitePool };
}
