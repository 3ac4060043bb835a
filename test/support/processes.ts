import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from '@sluice/testkit';

const ROOT = join(__dirname, '..', '..');

export const NATS_URL = process.env.SLUICE_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

export { freePort, waitFor };

/** A built app (`dist/apps/<app>/main.js`) running as a child process, output captured. */
export class AppProcess {
  output = '';
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static start(app: string, args: string[], env: NodeJS.ProcessEnv = {}): AppProcess {
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'apps', app, 'main.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new AppProcess(child);
  }

  async waitForOutput(pattern: RegExp, timeoutMs = 15000): Promise<RegExpExecArray> {
    return waitFor(
      () => pattern.exec(this.output) ?? undefined,
      `output ${pattern}\n${this.output}`,
      timeoutMs,
    );
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}

export interface FrontendProcess {
  proc: AppProcess;
  url: string;
  namespace: string;
}

let nsCounter = 0;
export function uniqueNamespace(prefix = 't'): string {
  return `${prefix}${process.pid}x${Date.now().toString(36)}x${nsCounter++}`;
}

/** A fresh directory for an embedded database, so concurrent processes never share one. */
export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'sluice-data-'));
}

/**
 * Starts `dist/apps/frontend/main.js` on a free port against real NATS in its own namespace;
 * without `--database-url` it gets an embedded database in a fresh temp directory.
 */
export async function startFrontend(
  flags: string[] = [],
  namespace = uniqueNamespace(),
  app = 'frontend',
): Promise<FrontendProcess> {
  const port = await freePort();
  const proc = AppProcess.start(app, [
    '--http-host',
    '127.0.0.1',
    '--http-port',
    String(port),
    '--nats-url',
    NATS_URL,
    '--namespace',
    namespace,
    ...(flags.includes('--database-url') || flags.includes('--data-dir')
      ? []
      : ['--data-dir', tempDataDir()]),
    ...flags,
  ]);
  const url = `http://127.0.0.1:${port}`;
  // Generous: a frontend starts in about 2 s, but a 2-core machine running the whole suite (or
  // a benchmark) beside it can take many times that; speed belongs to the bench, not here.
  await proc.waitForOutput(/frontend listening on/, 60_000);
  await waitFor(async () => (await fetch(`${url}/health`)).status === 200, 'frontend /health 200');
  return { proc, url, namespace };
}

export interface WorkerProcess {
  proc: AppProcess;
  url: string;
}

/** Starts a real simulated worker; without NATS it publishes nothing, tests report for it. */
export async function startWorker(flags: string[] = []): Promise<WorkerProcess> {
  const port = await freePort();
  const proc = AppProcess.start('worker', ['--port', String(port), '--speedup', '0', ...flags]);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/v1/models`)).ok, 'worker /v1/models');
  return { proc, url };
}
