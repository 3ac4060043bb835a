import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Proc, spawnApp, SpawnOptions } from './process';
import { ProcessGroup } from './process-group';
import { waitFor } from './wait';

/** A Sluice app listening on loopback. */
export interface Started {
  proc: Proc;
  url: string;
  port: number;
}

export interface FrontendStarted extends Started {
  namespace: string;
}

/**
 * Generous: an app starts in about 2 s, but a 2-core machine running a test suite or a benchmark
 * beside it can take many times that; speed belongs to the bench, not here.
 */
const START_TIMEOUT_MS = 60_000;

let nsCounter = 0;
/** A NATS namespace nobody else uses (letters and digits only). */
export function uniqueNamespace(prefix = 't'): string {
  return `${prefix}${process.pid}x${Date.now().toString(36)}x${nsCounter++}`;
}

/**
 * Where the test run keeps its temporary directories (removed after the run), when it names one;
 * otherwise the system's temporary directory.
 */
export const TEMP_ROOT_ENV = 'SLUICE_TEST_TMPDIR';
/**
 * An embedded database already created and migrated, for the default stores of the apps a run
 * starts (see `storeDataDir`). Unset (the bench), every app starts on an empty directory.
 */
export const DATA_TEMPLATE_ENV = 'SLUICE_TEST_DATA_TEMPLATE';

/** A fresh, empty directory for an embedded database, so concurrent processes never share one. */
export function tempDataDir(): string {
  return mkdtempSync(join(process.env[TEMP_ROOT_ENV] ?? tmpdir(), 'sluice-data-'));
}

/**
 * A fresh directory for the embedded database of an app started without a store of its own:
 * a copy of the run's template database when there is one (`DATA_TEMPLATE_ENV`), else empty.
 * Creating an embedded database costs seconds of CPU; the template pays that once per run
 * instead of once per app. The app still opens the copy and runs its migrations (none pending).
 * Tests of the first start on an empty directory pass `--data-dir` with a `tempDataDir()`.
 */
export function storeDataDir(): string {
  const dir = tempDataDir();
  const template = process.env[DATA_TEMPLATE_ENV];
  if (template) cpSync(join(template, 'pglite'), join(dir, 'pglite'), { recursive: true });
  return dir;
}

/** Spawns through the group when there is one, so the group stops it. */
function start(group: ProcessGroup | undefined, app: string, args: string[], o: SpawnOptions) {
  return group ? group.app(app, args, o) : spawnApp(app, args, o);
}

/**
 * The URL an app names in its own start line (`line`'s first group), and its port. Every app is
 * started on port 0, so the kernel picks a free port when the app binds it. A port picked
 * beforehand (bind, close, pass it on) can be handed to another spec's app in between: one of
 * the two then fails to start, and a readiness probe on that port is answered by the other app,
 * so a test would go on against a process that is not its own (and is stopped by another spec).
 */
async function announced(proc: Proc, line: RegExp): Promise<{ url: string; port: number }> {
  const [, url] = await proc.waitForOutput(line, START_TIMEOUT_MS);
  return { url, port: Number(new URL(url).port) };
}

const healthy = async (url: string): Promise<boolean> =>
  (await fetch(`${url}/health`)).status === 200;

export interface FrontendOptions extends SpawnOptions {
  natsUrl: string;
  namespace?: string;
  flags?: string[];
  /** The app to run: `frontend`, or one built the same way (`custom-guard-example`). */
  app?: string;
  group?: ProcessGroup;
  /**
   * `--admin-allow-loopback`, so tests and the bench may write thresholds without a token
   * (default true); false starts the frontend as its image does.
   */
  adminAllowLoopback?: boolean;
}

/**
 * Starts a frontend on a free loopback port and waits until /health answers 200. Without
 * `--database-url` or `--data-dir` among the flags it gets an embedded database in a fresh
 * temporary directory (`storeDataDir`).
 */
export async function startFrontend(o: FrontendOptions): Promise<FrontendStarted> {
  const namespace = o.namespace ?? uniqueNamespace();
  const flags = o.flags ?? [];
  const ownStore = flags.includes('--database-url') || flags.includes('--data-dir');
  const proc = start(
    o.group,
    o.app ?? 'frontend',
    [
      ...['--http-host', '127.0.0.1', '--http-port', '0'],
      ...['--nats-url', o.natsUrl, '--namespace', namespace],
      ...(ownStore ? [] : ['--data-dir', storeDataDir()]),
      ...(o.adminAllowLoopback === false ? [] : ['--admin-allow-loopback']),
      ...flags,
    ],
    o,
  );
  const { url, port } = await announced(proc, /frontend listening on (http:\/\/\S+)/);
  await waitFor(() => healthy(url), `${url}/health 200`, START_TIMEOUT_MS);
  return { proc, url, port, namespace };
}

export interface EmbeddedOptions extends SpawnOptions {
  flags?: string[];
  /** What its start line must say beyond `sluice: ready at` (e.g. how it reads engines). */
  ready?: RegExp;
  group?: ProcessGroup;
}

/**
 * `npm start`: the whole system in one process; an embedded database in a fresh temporary
 * directory (`storeDataDir`) unless flags say else.
 */
export async function startEmbedded(o: EmbeddedOptions = {}): Promise<Started> {
  const flags = o.flags ?? [];
  const ownStore = flags.includes('--database-url') || flags.includes('--data-dir');
  const proc = start(
    o.group,
    'embedded',
    [
      ...['--http-host', '127.0.0.1', '--http-port', '0'],
      ...(ownStore ? [] : ['--data-dir', storeDataDir()]),
      ...flags,
    ],
    o,
  );
  if (o.ready) await proc.waitForOutput(o.ready, START_TIMEOUT_MS);
  return { proc, ...(await announced(proc, /sluice: ready at (http:\/\/\S+)/)) };
}

export interface WorkerOptions extends SpawnOptions {
  /** Worker flags; `--speedup 0` (answers at once) unless they set another. */
  flags?: string[];
  group?: ProcessGroup;
}

/** Starts a simulated worker and waits until it serves /v1/models. */
export async function startWorker(o: WorkerOptions = {}): Promise<Started> {
  const proc = start(
    o.group,
    'worker',
    ['--host', '127.0.0.1', '--port', '0', '--speedup', '0', ...(o.flags ?? [])],
    o,
  );
  const { url, port } = await announced(proc, / serving .* at (http:\/\/\S+) \(dp /);
  await waitFor(
    async () => (await fetch(`${url}/v1/models`)).ok,
    `${url}/v1/models`,
    START_TIMEOUT_MS,
  );
  return { proc, url, port };
}

export interface BridgeOptions extends SpawnOptions {
  natsUrl: string;
  namespace: string;
  /** Bridge flags: the engine kind and its targets. */
  flags: string[];
  group?: ProcessGroup;
}

/** Starts a standalone engine bridge and waits until its /metrics and /health listen. */
export async function startBridge(o: BridgeOptions): Promise<Started> {
  const proc = start(
    o.group,
    'bridge',
    [
      ...['--nats-url', o.natsUrl, '--namespace', o.namespace],
      ...['--http-host', '127.0.0.1', '--http-port', '0'],
      ...o.flags,
    ],
    o,
  );
  return { proc, ...(await announced(proc, /\/metrics and \/health at (http:\/\/\S+)/)) };
}

/** Migrates a PostgreSQL database with the project's migrate app; throws with its output. */
export async function runMigrations(databaseUrl: string, group?: ProcessGroup): Promise<void> {
  const proc = start(group, 'migrate', ['run', '--database-url', databaseUrl], { name: 'migrate' });
  const code = await proc.exited;
  if (code !== 0) throw new Error(`migrate exited ${code}:\n${proc.output}`);
}
