import { lookup } from 'node:dns/promises';
import { BridgeLogger } from '../bridge-logger';
import { DnsTargetSpec, Target, targetForAddress } from './target';
import { TargetSource } from './target-source';
import { sameTargets } from './targets-file.source';

/** Resolves a name to every address it has (A and AAAA), as `getaddrinfo` does. */
export type DnsResolver = (name: string) => Promise<string[]>;

export const DEFAULT_DNS_INTERVAL_MS = 5000;

export const systemResolver: DnsResolver = async (name) =>
  (await lookup(name, { all: true })).map((a) => a.address);

/** Codes meaning "the name has no address now" (a headless Service with no ready pod). */
const NO_ADDRESS = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * `--dns-target NAME:PORT`: every address is a target, re-resolved periodically. A name with no
 * address means no targets; a failing resolver (timeouts, SERVFAIL) keeps the previous set.
 */
export class DnsTargetSource implements TargetSource {
  private targets: readonly Target[] = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private failing = false;

  constructor(
    private readonly spec: DnsTargetSpec,
    private readonly resolver: DnsResolver,
    private readonly logger: BridgeLogger,
    private readonly intervalMs = DEFAULT_DNS_INTERVAL_MS,
  ) {}

  async start(onChange: () => void): Promise<void> {
    await this.resolve();
    const loop = (): void => {
      this.timer = setTimeout(() => {
        void this.resolve().then(
          (changed) => {
            if (this.stopped) return;
            if (changed) onChange();
            loop();
          },
          () => loop(),
        );
      }, this.intervalMs);
    };
    loop();
  }

  current(): readonly Target[] {
    return this.targets;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** True when the set changed. Never rejects. */
  private async resolve(): Promise<boolean> {
    let addresses: string[];
    try {
      addresses = await this.resolver(this.spec.name);
      this.failing = false;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && NO_ADDRESS.has(code)) {
        addresses = [];
      } else {
        if (!this.failing) {
          this.logger.warn(
            `resolving ${this.spec.name} failed, keeping ${this.targets.length} targets: ${String(err)}`,
          );
        }
        this.failing = true;
        return false;
      }
    }
    const next = [...new Set(addresses)].sort().map((a) => targetForAddress(a, this.spec.port));
    if (sameTargets(this.targets, next)) return false;
    this.targets = next;
    return true;
  }
}
