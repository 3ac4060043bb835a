import * as testkit from '@sluice/testkit';
import { ProcessGroup, runMigrations, SpawnOptions, Started } from '@sluice/testkit';
import { Client } from 'pg';
import { request } from 'undici';

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

/** The tenants of a "Sluice with tenants": limits set, far above what a bench run sends. */
const TENANTS = [
  { id: 'acme', weight: 3 },
  { id: 'globex', weight: 1 },
  { id: 'initech', weight: 1 },
];
const TENANT_LIMITS = {
  requests_per_minute: 100_000_000,
  tokens_per_minute: 2_000_000_000,
  max_concurrency: 100_000,
};

/** The database of a scenario's "Sluice with tenants": the bench's, suffixed. */
export const tenantsDatabase = (databaseUrl: string): string =>
  `${new URL(databaseUrl).pathname.slice(1)}_tenants`;

async function admin(method: 'PUT' | 'POST', url: string, body: unknown): Promise<string> {
  const res = await request(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode !== 201) throw new Error(`${method} ${url}: ${res.statusCode} ${text}`);
  return text;
}

/**
 * "Sluice with tenants", as an operator who hands out keys runs it: the frontend with `o.flags`
 * plus `--require-tenant`, on a database of its own (`tenantsDatabase`, so the plain frontend's
 * holds no tenants; drop it after the group stops), with three tenants created through
 * `/tenants`, each with limits and a key. Returns the frontend and the first tenant's key.
 */
export async function startFrontendWithTenants(
  group: ProcessGroup,
  o: FrontendOptions,
): Promise<{ fe: Started; key: string }> {
  const databaseUrl = await createDatabase(group, tenantsDatabase(o.databaseUrl));
  const fe = await startFrontend(group, {
    ...o,
    databaseUrl,
    flags: [...(o.flags ?? []), '--require-tenant'],
  });
  const keys: string[] = [];
  for (const t of TENANTS) {
    await admin('PUT', `${fe.url}/tenants/${t.id}`, { weight: t.weight, ...TENANT_LIMITS });
    const created = JSON.parse(await admin('POST', `${fe.url}/tenants/${t.id}/keys`, {})) as {
      key: string;
    };
    keys.push(created.key);
  }
  return { fe, key: keys[0] };
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
