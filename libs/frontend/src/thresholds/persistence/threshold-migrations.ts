import { DataSource, MigrationExecutor } from 'typeorm';

/** Applies every pending migration in one transaction; returns the names applied, oldest first. */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const applied = await dataSource.runMigrations({ transaction: 'all' });
  return applied.map((m) => m.name);
}

/** Reverts the most recently applied migration; returns its name, or null if none was applied. */
export async function revertLastMigration(dataSource: DataSource): Promise<string | null> {
  // TypeORM's undo does not say what it reverted: it takes the newest executed row, as here.
  const executed = await new MigrationExecutor(dataSource).getExecutedMigrations();
  if (executed.length === 0) return null;
  const last = executed.reduce((a, b) => ((b.id ?? 0) > (a.id ?? 0) ? b : a));
  await dataSource.undoLastMigration({ transaction: 'all' });
  return last.name;
}

/** Names of the migrations not yet applied, oldest first. */
export async function pendingMigrations(dataSource: DataSource): Promise<string[]> {
  const pending = await new MigrationExecutor(dataSource).getPendingMigrations();
  return pending.map((m) => m.name);
}
