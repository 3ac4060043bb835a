import * as testkit from '@sluice/testkit';
import { ProcessGroup, runMigrations, SpawnOptions, Started } from '@sluice/testkit';
import { Client } from 'pg';

export type { Started } from '@sluice/testkit';

/** The frontend configuration most scenarios measure: token-capacity, decode threshold 0.85. */
export const DECODE_SHEDDING = [
  '--admission-control',
  'token-capacity',
  '--active-decode-blocks-threshold',
  '0.85',
];

export interface FrontendOptions extends SpawnOptions {
  natsUrl: string;
  databaseUrl: string;
  namespace: string;
  flags?: string[];
}

/** A frontend of the bench: on the bench's own database, stopped with the scenario's group. */
export function startFrontend(group: ProcessGroup, o: FrontendOptions): Promise<Started> {
  const flags = ['--database-url', o.databaseUrl, ...(o.flags ?? [])];
  return testkit.startFrontend({ ...o, flags, group });
}

/** A simulated worker (`--speedup 0` unless the flags say otherwise). */
export function startWorker(
  group: ProcessGroup,
  flags: string[],
  options: SpawnOptions = {},
): Promise<Started> {
  return testkit.startWorker({ ...options, flags, group });
}

const adminClient = (): Client =>
  new Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres' });

/** Creates the bench's own database, migrates it with the project's migrate app. */
export async function createDatabase(group: ProcessGroup, name: string): Promise<string> {
  const admin = adminClient();
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = `postgres://postgres@127.0.0.1:5432/${name}`;
  await runMigrations(url, group);
  return url;
}

export async function dropDatabase(name: string): Promise<void> {
  const admin = adminClient();
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
