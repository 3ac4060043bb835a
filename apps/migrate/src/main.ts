import { createThresholdDataSource, revertLastMigration, runMigrations } from '@sluice/frontend';
import { readCommandLine } from '@sluice/cli';
import { describeTarget, MIGRATE_USAGE, MigrateOptions, parseMigrateArgs } from './migrate.options';

function describeError(err: unknown): string {
  // pg reports a refused dual-stack connect as an AggregateError with an empty message.
  if (err instanceof AggregateError && !err.message) {
    return err.errors.map(describeError).join('; ');
  }
  return err instanceof Error ? err.message : String(err);
}

async function migrate(options: MigrateOptions, target: string): Promise<void> {
  const dataSource = createThresholdDataSource(options);
  try {
    await dataSource.initialize();
  } catch (err) {
    throw new Error(`cannot open ${target}: ${describeError(err)}`);
  }
  try {
    if (options.command === 'run') {
      const applied = await runMigrations(dataSource);
      for (const name of applied) process.stdout.write(`applied ${name}\n`);
      process.stdout.write(
        applied.length
          ? `${applied.length} migration(s) applied to ${target}\n`
          : `${target} is up to date: no pending migrations\n`,
      );
    } else {
      const reverted = await revertLastMigration(dataSource);
      process.stdout.write(
        reverted ? `reverted ${reverted} on ${target}\n` : `nothing to revert on ${target}\n`,
      );
    }
  } finally {
    await dataSource.destroy();
  }
}

async function main(): Promise<number> {
  const cli = { prefix: 'sluice-migrate', usage: MIGRATE_USAGE, parse: parseMigrateArgs };
  const read = readCommandLine(cli, process.argv.slice(2), process.env, process);
  if (read.kind === 'exit') return read.code;
  const options = read.value;
  const target = describeTarget(options);
  try {
    await migrate(options, target);
    return 0;
  } catch (err) {
    process.stderr.write(`sluice-migrate: ${options.command} failed: ${describeError(err)}\n`);
    return 1;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`sluice-migrate: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
