import { FSWatcher, watch } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { BridgeLogger } from '../bridge-logger';
import { parseTargetsFile, Target, TargetSpecError } from './target';
import { TargetSource } from './target-source';

export const DEFAULT_FILE_POLL_MS = 1000;
const RELOAD_DEBOUNCE_MS = 50;

/**
 * `--targets-file`: re-read when it changes. fs.watch reacts at once; a periodic stat catches
 * what it misses (files replaced by rename, as editors and Kubernetes ConfigMaps do, and
 * filesystems without notifications). A file that turns invalid or vanishes is logged and the
 * previous set kept.
 */
export class TargetsFileSource implements TargetSource {
  private targets: readonly Target[] = [];
  private watcher: FSWatcher | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private fingerprint = '';
  private stopped = false;
  private onChange: () => void = () => undefined;

  constructor(
    private readonly path: string,
    private readonly logger: BridgeLogger,
    private readonly pollMs = DEFAULT_FILE_POLL_MS,
  ) {}

  async start(onChange: () => void): Promise<void> {
    this.onChange = onChange;
    let text: string;
    try {
      this.fingerprint = await this.stamp();
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      throw new TargetSpecError(`${this.path}: ${(err as Error).message}`);
    }
    const { targets, errors } = parseTargetsFile(text);
    if (errors.length > 0) throw new TargetSpecError(`${this.path}: ${errors.join('; ')}`);
    this.targets = targets;
    this.watch();
    this.pollTimer = setInterval(() => void this.poll(), this.pollMs);
    this.pollTimer.unref();
  }

  current(): readonly Target[] {
    return this.targets;
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = undefined;
    clearInterval(this.pollTimer);
    clearTimeout(this.debounce);
  }

  private watch(): void {
    try {
      this.watcher = watch(this.path, { persistent: false }, () => this.schedule());
      this.watcher.on('error', () => {
        // the file was replaced or removed: the poll re-arms the watch
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      this.watcher = undefined;
    }
  }

  private async poll(): Promise<void> {
    try {
      const stamp = await this.stamp();
      if (!this.watcher && !this.stopped) this.watch();
      if (stamp !== this.fingerprint) this.schedule();
    } catch {
      // vanished for now: keep the previous set, look again at the next poll
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.reload(), RELOAD_DEBOUNCE_MS);
  }

  private async reload(): Promise<void> {
    let text: string;
    try {
      this.fingerprint = await this.stamp();
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      this.logger.warn(
        `targets file ${this.path} unreadable, keeping ${this.targets.length} targets: ${(err as Error).message}`,
      );
      return;
    }
    if (this.stopped) return;
    const { targets, errors } = parseTargetsFile(text);
    if (errors.length > 0) {
      this.logger.warn(
        `targets file ${this.path} invalid, keeping the previous set: ${errors.slice(0, 5).join('; ')}`,
      );
      return;
    }
    if (sameTargets(this.targets, targets)) return;
    this.targets = targets;
    this.logger.log(`targets file ${this.path} reloaded: ${targets.length} targets`);
    this.onChange();
  }

  private async stamp(): Promise<string> {
    const s = await stat(this.path);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  }
}

export function sameTargets(a: readonly Target[], b: readonly Target[]): boolean {
  return (
    a.length === b.length && a.every((t, i) => t.workerId === b[i].workerId && t.url === b[i].url)
  );
}
