import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { httpGet } from './http';
import { Proc, ProcessGroup, SpawnOptions } from './processes';
import { freePort, waitFor } from './util';

/** The frontend configuration most scenarios measure: token-capacity, decode threshold 0.85. */
export const DECODE_SHEDDING = [
  '--admission-control',
  'token-capacity',
  '--active-decode-blocks-threshold',
  '0.85',
];

export interface Started {
  proc: Proc;
  url: string;
  port: number;
}

export interface FrontendOptions extends SpawnOptions {
  natsUrl: string;
  databaseUrl: string;
  namespace: string;
  flags?: string[];
  name?: string;
}

/** Starts `dist/apps/frontend/main.js` and waits until /health answers 200. */
export async function startFrontend(group: ProcessGroup, o: FrontendOptions): Promise<Started> {
  const port = await freePort();
  const proc = group.node(
    o.name ?? 'frontend',
    'dist/apps/frontend/main.js',
    [
      ...['--http-host', '127.0.0.1', '--http-port', String(port)],
      ...['--nats-url', o.natsUrl, '--namespace', o.namespace, '--database-url', o.databaseUrl],
      ...(o.flags ?? []),
    ],
    o,
  );
  const url = `http://127.0.0.1:${port}`;
  await proc.waitForOutput(/frontend listening on/, 30000);
  await waitFor(async () => (await httpGet(`${url}/health`)).status === 200, `${url}/health`);
  return { proc, url, port };
}

/** Starts a simulated worker (`--speedup 0` unless the flags say otherwise). */
export async function startWorker(
  group: ProcessGroup,
  flags: string[],
  options: SpawnOptions & { name?: string } = {},
): Promise<Started> {
  const port = await freePort();
  const proc = group.node(
    options.name ?? 'worker',
    'dist/apps/worker/main.js',
    ['--host', '127.0.0.1', '--port', String(port), ...flags],
    options,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => (await httpGet(`${url}/v1/models`)).status === 200,
    `${url}/v1/models`,
    20000,
  );
  return { proc, url, port };
}

export function commandExists(cmd: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${cmd} || ls /usr/sbin/${cmd} 2>/dev/null`], {
    encoding: 'utf8',
  });
  const path = r.stdout.trim().split('\n')[0];
  return r.status === 0 && path ? path : null;
}

/**
 * A private nats-server with its monitoring port, for the report-flood scenarios: its /varz and
 * /connz show delivered messages, pending bytes and slow consumers, which the shared server
 * does not expose, and the flood does not disturb anyone else's tests.
 */
export async function startPrivateNats(
  group: ProcessGroup,
  tmpDir: string,
  cpu?: string,
): Promise<{ url: string; monitor: string; proc: Proc } | null> {
  const bin = commandExists('nats-server');
  if (!bin) return null;
  const port = await freePort();
  const mport = await freePort();
  const dir = mkdtempSync(join(tmpDir, 'nats-'));
  const proc = group.exec(
    'nats-server',
    bin,
    ['-a', '127.0.0.1', '-p', String(port), '-m', String(mport), '-sd', dir],
    { cpu },
  );
  const monitor = `http://127.0.0.1:${mport}`;
  await waitFor(async () => (await httpGet(`${monitor}/varz`)).status === 200, 'nats-server /varz');
  return { url: `nats://127.0.0.1:${port}`, monitor, proc };
}

/** Creates the bench's own database, migrates it with the project's migrate app. */
export async function createDatabase(group: ProcessGroup, name: string): Promise<string> {
  const admin = new Client({
    host: '127.0.0.1',
    port: 5432,
    user: 'postgres',
    database: 'postgres',
  });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = `postgres://postgres@127.0.0.1:5432/${name}`;
  const proc = group.node('migrate', 'dist/apps/migrate/main.js', ['run', '--database-url', url]);
  const code = await proc.exited;
  if (code !== 0) throw new Error(`migration of ${name} failed:\n${proc.tail}`);
  return url;
}

export async function dropDatabase(name: string): Promise<void> {
  const admin = new Client({
    host: '127.0.0.1',
    port: 5432,
    user: 'postgres',
    database: 'postgres',
  });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
