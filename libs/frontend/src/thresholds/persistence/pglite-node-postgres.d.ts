// TypeScript's "node" module resolution (tsconfig.json) ignores package.json "exports", so it
// cannot find the types PGlite ships for this subpath (dist/node-postgres/index.d.ts). This is
// the part of them Sluice uses; Node itself resolves the subpath through "exports" as usual.
declare module '@electric-sql/pglite/node-postgres' {
  import { EventEmitter } from 'node:events';
  import type { PGlite } from '@electric-sql/pglite';

  /** Speaks the Postgres wire protocol to a PGlite instance on behalf of one `pg` client. */
  export class PglitePgConnection extends EventEmitter {
    constructor(config: { pglite: PGlite });
    connect(port: number, host: string): Promise<void>;
  }
}
