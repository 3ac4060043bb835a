import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { metricSamples } from './metrics-text';
import { Proc, ROOT, spawnProcess, SpawnOptions } from './process';
import { ProcessGroup } from './process-group';
import { quietPort, waitFor } from './wait';

/**
 * The models `npm run engines:setup` writes (random weights): `tiny` (n_embd 512, 8 layers) and
 * `micro` (256, 4 layers, about four times faster; what the tests and the bench run).
 */
export const LLAMA_MODELS = ['tiny', 'micro'] as const;
export type LlamaModel = (typeof LLAMA_MODELS)[number];

/** Where `npm run engines:setup` (tools/engines/setup.sh) keeps the engine root and models. */
export const ENGINES_DIR_ENV = 'SLUICE_ENGINES_DIR';

export function enginesDir(): string {
  return process.env[ENGINES_DIR_ENV] ?? join(ROOT, '.engines');
}

/** The Debian testing root that holds Debian's `llama-server`. */
export function engineRoot(): string {
  return join(enginesDir(), 'forky');
}

/**
 * Why the real llama.cpp server cannot run on this machine, in one line, or null when it can.
 * It runs in a chroot made by `npm run engines:setup`, so it needs Linux, root and that root.
 */
export function realEngineUnavailable(): string | null {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (process.getuid?.() !== 0) return 'the engine runs in a chroot, which needs root';
  const root = engineRoot();
  if (!existsSync(join(root, '.sluice-ready'))) {
    return `no engine root at ${root} (run \`npm run engines:setup\`)`;
  }
  for (const model of LLAMA_MODELS) {
    const file = join(root, 'models', `${model}.gguf`);
    if (!existsSync(file)) return `no model at ${file} (run \`npm run engines:setup\`)`;
  }
  return null;
}

export interface LlamaServerOptions extends SpawnOptions {
  /** Parallel slots (`-np`); default 4. */
  slots?: number;
  /** Total context (`-c`), shared by the slots; default 8192 (2048 a slot at 4 slots). */
  context?: number;
  /** The served model name (`-a`); default the model's name. */
  alias?: string;
  /** Threads (`-t`); default 1. */
  threads?: number;
  /** One of the models under the root's `/models`; default `tiny`. */
  model?: LlamaModel;
  /** Further flags, e.g. `--no-slots` or `--kv-unified`. */
  args?: string[];
  group?: ProcessGroup;
}

/**
 * Debian's real `llama-server` (llama.cpp) on a loopback port below the ephemeral range, with
 * `--metrics`, serving one of the random-weight models (LLAMA_MODELS): its text is noise, its slots, queue, KV
 * cache, timings and metrics are the real server's. `stop()` and `restart()` take it away and
 * bring it back on the same port.
 */
export class LlamaServer {
  private proc: Proc | undefined;
  private past = '';

  private constructor(
    readonly port: number,
    private readonly options: LlamaServerOptions,
  ) {}

  /** Starts one and waits until it answers `/health`; throws when the engine is unavailable. */
  static async start(options: LlamaServerOptions = {}): Promise<LlamaServer> {
    const why = realEngineUnavailable();
    if (why) throw new Error(`the real llama.cpp server cannot run here: ${why}`);
    const server = new LlamaServer(await quietPort(), options);
    await server.restart();
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get alias(): string {
    return this.options.alias ?? this.options.model ?? 'tiny';
  }

  get slots(): number {
    return this.options.slots ?? 4;
  }

  get running(): boolean {
    return this.proc?.running ?? false;
  }

  get pid(): number {
    return this.proc?.pid ?? -1;
  }

  /** Everything every run of the server wrote. */
  get output(): string {
    return this.past + (this.proc?.output ?? '');
  }

  /** Starts the server (again) on its port and resolves once `/health` answers 200. */
  async restart(timeoutMs = 60_000): Promise<void> {
    if (this.running) return;
    this.past += this.proc?.output ?? '';
    const root = engineRoot();
    mountProc(root);
    const o = this.options;
    const args = [
      root,
      'llama-server',
      ['-m', `/models/${o.model ?? 'tiny'}.gguf`],
      ['--host', '127.0.0.1', '--port', String(this.port)],
      ['-c', String(o.context ?? 8192), '-np', String(this.slots), '-t', String(o.threads ?? 1)],
      ['-a', this.alias, '--metrics'],
      o.args ?? [],
    ].flat();
    const spawnOptions = { name: `llama-server:${this.port}`, ...o };
    // chroot execs the server, so the process a test signals is the server itself.
    const proc = o.group
      ? o.group.exec(spawnOptions.name, 'chroot', args, spawnOptions)
      : spawnProcess('chroot', args, spawnOptions);
    this.proc = proc;
    await waitFor(
      async () => {
        if (!proc.running) throw new Error(`exited early:\n${proc.output.slice(-2000)}`);
        const res = await fetch(`${this.url}/health`);
        return res.status === 200;
      },
      `llama-server on ${this.port}`,
      timeoutMs,
      50,
    );
  }

  /** Stops the server: SIGKILL by default (an engine that dies, not one that shuts down). */
  async stop(sig: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.proc || !this.running) return;
    await this.proc.stop(sig);
  }

  /** GET a path of the server and parse its JSON. */
  async json<T>(path: string): Promise<T> {
    const res = await fetch(`${this.url}${path}`);
    if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  }

  /** The server's own Prometheus text (`/metrics`). */
  async metrics(): Promise<string> {
    const res = await fetch(`${this.url}/metrics`);
    return res.text();
  }

  /** Slots processing and requests waiting for one, from `/metrics`. */
  async load(): Promise<{ processing: number; deferred: number }> {
    const text = await this.metrics();
    const one = (name: string): number => metricSamples(text, `llamacpp:${name}`)[0] ?? NaN;
    return { processing: one('requests_processing'), deferred: one('requests_deferred') };
  }
}

/** The server reads /proc (CPU count, memory); the root gets the host's, bound once. */
function mountProc(root: string): void {
  const proc = join(root, 'proc');
  if (spawnSync('mountpoint', ['-q', proc]).status === 0) return;
  spawnSync('mount', ['--bind', '/proc', proc], { stdio: 'ignore' });
}
