import { parseArgs } from 'node:util';

export type MigrateCommand = 'run' | 'revert';

export interface MigrateOptions {
  command: MigrateCommand;
  /** PostgreSQL URL; `null` = the embedded database under `dataDir`. */
  databaseUrl: string | null;
  dataDir: string;
}

export const MIGRATE_USAGE = `usage: node dist/apps/migrate/main.js run|revert [--database-url URL] [--data-dir DIR]
  run     apply every pending migration
  revert  revert the most recently applied migration
  --database-url URL  PostgreSQL, e.g. postgres://user@host:5432/sluice (env SLUICE_DATABASE_URL);
                      unset: the embedded database under --data-dir
  --data-dir DIR      embedded database directory (env SLUICE_DATA_DIR); default ./data`;

/** Bad command line: exit code 2 with the usage text. */
export class MigrateUsageError extends Error {
  override readonly name = 'MigrateUsageError';
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

export function parseMigrateArgs(argv: string[], env: NodeJS.ProcessEnv): MigrateOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { 'database-url': { type: 'string' }, 'data-dir': { type: 'string' } },
    });
  } catch (err) {
    throw new MigrateUsageError(err instanceof Error ? err.message : String(err));
  }
  const [command, ...extra] = parsed.positionals;
  if (command !== 'run' && command !== 'revert') {
    throw new MigrateUsageError(
      command === undefined ? 'missing command' : `unknown command '${command}'`,
    );
  }
  if (extra.length > 0) throw new MigrateUsageError(`unexpected argument '${extra[0]}'`);

  const source =
    parsed.values['database-url'] !== undefined ? '--database-url' : 'SLUICE_DATABASE_URL';
  const databaseUrl = nonEmpty(parsed.values['database-url'] ?? env.SLUICE_DATABASE_URL) ?? null;
  if (
    databaseUrl !== null &&
    (!/^postgres(ql)?:\/\//.test(databaseUrl) || !URL.canParse(databaseUrl))
  ) {
    // The URL may hold a password: name its source, never print it.
    throw new MigrateUsageError(`${source}: expected postgres://user@host:port/db`);
  }
  const dataDir = nonEmpty(parsed.values['data-dir'] ?? env.SLUICE_DATA_DIR) ?? './data';
  return { command, databaseUrl, dataDir };
}

/** Where the migrations go, for messages: never the URL's password. */
export function describeTarget(options: MigrateOptions): string {
  if (options.databaseUrl === null) return `the embedded database in ${options.dataDir}`;
  const url = new URL(options.databaseUrl);
  return `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`;
}
