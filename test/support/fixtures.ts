import * as testkit from '@sluice/testkit';
import { ProcessGroup } from '@sluice/testkit';
import { TestBus } from './bus';
import { createMigratedDatabase, TestDatabase } from './database';
import { chat } from './http';
import { FrontendProcess, NATS_URL, waitFor, WorkerProcess } from './processes';

/** Starting processes on a busy 2-core machine can be slow; speed belongs to the bench. */
const SETUP_TIMEOUT_MS = 120_000;

/**
 * A process group for the current `describe`: whatever a test starts through it is stopped
 * after the last test (after each test, with `'each'`), even when an expectation failed.
 */
export function useProcesses(when: 'all' | 'each' = 'all'): ProcessGroup {
  const group = new ProcessGroup();
  (when === 'each' ? afterEach : afterAll)(() => group.stopAll());
  return group;
}

export interface SystemSpec {
  /** Frontend flags; without them no frontend is started. A function sees the database. */
  frontend?: string[] | ((s: System) => string[]);
  /** The frontend's app (`frontend` unless e.g. `custom-guard-example`). */
  app?: string;
  /** Environment of the frontend (e.g. NODE_OPTIONS). */
  env?: NodeJS.ProcessEnv;
  namespace?: string;
  /** One entry per simulated worker: its flags (`--speedup 0` unless set). */
  workers?: string[][] | ((s: System) => string[][]);
  /** The workers report their load on NATS in the system's namespace (else tests report). */
  reporting?: boolean;
  /** Open a connection that publishes docs/api.md#nats-subjects messages. */
  bus?: boolean;
  /** Wait until the frontend serves a chat completion (200) before the first test. */
  serving?: boolean;
  /**
   * Create a migrated PostgreSQL database (name prefix; `createMigratedDatabase`); the frontend
   * uses it unless its flags name another `--database-url` (e.g. through a proxy).
   */
  database?: string;
}

/**
 * A process of the system that exits before a test or `afterAll` stops it prints why, so that
 * a test failing on a refused connection names the process that died and its last words.
 */
function reportDeath(proc: testkit.Proc): void {
  void proc.exited.then((code) => {
    if (proc.stopRequested) return;
    const signal = proc.child.signalCode;
    console.error(
      `${proc.name} (pid ${proc.pid}) exited by itself, ${signal ?? `code ${code}`}:\n` +
        proc.output.slice(-4000),
    );
  });
}

/** What a `useSystem` started, filled in before the first test. */
export interface System {
  namespace: string;
  fe: FrontendProcess;
  workers: WorkerProcess[];
  /** The first worker. */
  worker: WorkerProcess;
  bus: TestBus;
  db: TestDatabase;
  /** For processes a test adds; stopped with the rest. */
  group: ProcessGroup;
}

/**
 * The processes a spec file tests against, started in `beforeAll` (the database migrated
 * first, the workers and the frontend side by side) and stopped in `afterAll`, where the bus is
 * closed and the database dropped too. Read its fields inside tests and later hooks only.
 */
export function useSystem(spec: SystemSpec): System {
  const group = new ProcessGroup();
  const sys = { namespace: spec.namespace ?? testkit.uniqueNamespace(), group } as System;

  beforeAll(async () => {
    if (spec.database) {
      sys.db = await createMigratedDatabase(spec.database, group);
    }
    if (spec.bus) sys.bus = await TestBus.connect();
    const workers = Promise.all(
      (typeof spec.workers === 'function' ? spec.workers(sys) : (spec.workers ?? [])).map((own) => {
        const nats = spec.reporting ? ['--nats-url', NATS_URL, '--namespace', sys.namespace] : [];
        return testkit.startWorker({ flags: [...nats, ...own], group });
      }),
    );
    const flags = typeof spec.frontend === 'function' ? spec.frontend(sys) : spec.frontend;
    const ownStore = !spec.database || flags?.includes('--database-url');
    const fe = flags
      ? testkit.startFrontend({
          natsUrl: NATS_URL,
          namespace: sys.namespace,
          flags: [...(ownStore ? [] : ['--database-url', sys.db.url()]), ...flags],
          app: spec.app,
          env: spec.env,
          group,
        })
      : undefined;
    // Awaited together: one failing must not leave the other's rejection unhandled.
    const [started, frontend] = await Promise.all([workers, fe]);
    sys.workers = started;
    sys.worker = started[0];
    if (frontend) sys.fe = frontend;
    for (const { proc } of [...started, ...(frontend ? [frontend] : [])]) reportDeath(proc);
    if (spec.serving) {
      await waitFor(async () => (await chat(sys.fe.url)).status === 200, 'a worker serving');
    }
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await group.stopAll();
    await sys.bus?.close();
    await sys.db?.drop();
  });
  return sys;
}

/**
 * `npm start` (the embedded app: frontend, simulated workers, embedded database) for the
 * current `describe`, started before its first test and stopped after its last.
 */
export function useEmbedded(options: testkit.EmbeddedOptions): testkit.Started {
  const group = new ProcessGroup();
  const sys = {} as testkit.Started;
  beforeAll(async () => {
    Object.assign(sys, await testkit.startEmbedded({ ...options, group }));
  }, SETUP_TIMEOUT_MS);
  afterAll(() => group.stopAll());
  return sys;
}
