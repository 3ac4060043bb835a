import { describeTarget, MigrateUsageError, parseMigrateArgs } from './migrate.options';

describe('parseMigrateArgs', () => {
  it('reads the command and --database-url (flag over env)', () => {
    const sut = parseMigrateArgs(['run', '--database-url', 'postgres://u:secret@db:6543/sluice'], {
      SLUICE_DATABASE_URL: 'postgres://other/db',
    });
    expect(sut).toEqual({
      command: 'run',
      databaseUrl: 'postgres://u:secret@db:6543/sluice',
      dataDir: './data',
    });
    expect(describeTarget(sut)).toBe('PostgreSQL at db:6543/sluice');
  });

  it('falls back to SLUICE_DATABASE_URL, then to the embedded database in --data-dir', () => {
    expect(parseMigrateArgs(['revert'], { SLUICE_DATABASE_URL: 'postgresql://h/d' })).toEqual({
      command: 'revert',
      databaseUrl: 'postgresql://h/d',
      dataDir: './data',
    });
    const embedded = parseMigrateArgs(['run', '--data-dir=/var/sluice'], {
      SLUICE_DATABASE_URL: '',
    });
    expect(embedded).toEqual({ command: 'run', databaseUrl: null, dataDir: '/var/sluice' });
    expect(describeTarget(embedded)).toBe('the embedded database in /var/sluice');
    expect(parseMigrateArgs(['run'], { SLUICE_DATA_DIR: '/d' }).dataDir).toBe('/d');
  });

  it.each([
    [[], /missing command/],
    [['up'], /unknown command 'up'/],
    [['run', 'now'], /unexpected argument 'now'/],
    [['run', '--nats-url', 'x'], /nats-url/],
    [['run', '--database-url', 'mysql://u:pw@h/d'], /--database-url: expected postgres:\/\//],
  ])('rejects %j as bad usage', (argv, message) => {
    expect(() => parseMigrateArgs(argv, {})).toThrow(MigrateUsageError);
    expect(() => parseMigrateArgs(argv, {})).toThrow(message);
  });

  it('never repeats a rejected URL, which may hold a password', () => {
    expect(() => parseMigrateArgs(['run'], { SLUICE_DATABASE_URL: 'mysql://u:pw@h/d' })).toThrow(
      /^SLUICE_DATABASE_URL: expected/,
    );
    expect(() =>
      parseMigrateArgs(['run'], { SLUICE_DATABASE_URL: 'mysql://u:pw@h/d' }),
    ).not.toThrow(/pw/);
  });
});
