import { formatUsage, parseFlags, postgresUrl, UsageError, valueFlag } from '@sluice/cli';

export type MigrateCommand = 'run' | 'revert';

export interface MigrateOptions {
  command: MigrateCommand;
  /** PostgreSQL URL; `null` = the embedded database under `dataDir`. */
  databaseUrl: string | null;
  dataDir: string;
}

const DEFAULT_DATA_DIR = './data';

// An empty flag counts as unset, like an empty variable: `--database-url "$URL"` with URL unset
// migrates the embedded database.
export const MIGRATE_FLAGS = {
  'database-url': valueFlag({
    arg: 'URL',
    help: 'PostgreSQL, e.g. postgres://user@host:5432/sluice; unset: the embedded database',
    parse: (raw) => (raw === '' ? null : postgresUrl(raw)),
    default: null,
  }),
  'data-dir': valueFlag({
    arg: 'DIR',
    help: 'embedded database directory',
    parse: (raw) => raw || DEFAULT_DATA_DIR,
    default: DEFAULT_DATA_DIR,
  }),
};

const ENV_PREFIX = 'SLUICE_';

export const MIGRATE_USAGE = formatUsage(
  MIGRATE_FLAGS,
  {
    synopsis:
      'usage: node dist/apps/migrate/main.js run|revert [--database-url URL] [--data-dir DIR]',
    about: [
      '  run     apply every pending migration',
      '  revert  revert the most recently applied migration',
    ],
  },
  ENV_PREFIX,
);

/** Bad command line: exit code 2 with the usage text. */
export class MigrateUsageError extends UsageError {
  override readonly name = 'MigrateUsageError';
}

export function parseMigrateArgs(argv: string[], env: NodeJS.ProcessEnv): MigrateOptions {
  const { values, positionals } = parseFlags(MIGRATE_FLAGS, argv, env, {
    envPrefix: ENV_PREFIX,
    positionals: true,
    // The URL may hold a password: name its source, never print it.
    error: (p) => new MigrateUsageError(p.kind === 'syntax' ? p.message : `${p.flag}: ${p.reason}`),
  });
  const [command, ...extra] = positionals;
  if (command !== 'run' && command !== 'revert') {
    throw new MigrateUsageError(
      command === undefined ? 'missing command' : `unknown command '${command}'`,
    );
  }
  if (extra.length > 0) throw new MigrateUsageError(`unexpected argument '${extra[0]}'`);
  return { command, databaseUrl: values['database-url'], dataDir: values['data-dir'] };
}

/** Where the migrations go, for messages: never the URL's password. */
export function describeTarget(options: MigrateOptions): string {
  if (options.databaseUrl === null) return `the embedded database in ${options.dataDir}`;
  const url = new URL(options.databaseUrl);
  return `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`;
}
