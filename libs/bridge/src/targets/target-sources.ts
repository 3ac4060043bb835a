import { BridgeLogger } from '../bridge-logger';
import { DnsResolver, DnsTargetSource, systemResolver } from './dns-target.source';
import { parseDnsTarget, parseTargetSpec } from './target';
import { StaticTargetSource, TargetSource } from './target-source';
import { TargetsFileSource } from './targets-file.source';

/** Where the bridge's targets come from (part of `EngineBridgeOptions`). */
export interface TargetSourceOptions {
  /** `[NAME=]URL` each. */
  readonly targets?: readonly string[];
  readonly targetsFile?: string;
  /** `NAME:PORT` each. */
  readonly dnsTargets?: readonly string[];
  // Seams for tests and embedding; defaults are the real thing.
  readonly resolver?: DnsResolver;
  readonly dnsIntervalMs?: number;
  readonly filePollMs?: number;
}

/** The sources the options name; a malformed `--target` or `--dns-target` throws here. */
export function buildTargetSources(
  options: TargetSourceOptions,
  logger: BridgeLogger,
): TargetSource[] {
  const sources: TargetSource[] = [];
  if (options.targets?.length) {
    sources.push(new StaticTargetSource(options.targets.map((t) => parseTargetSpec(t))));
  }
  if (options.targetsFile !== undefined) {
    sources.push(new TargetsFileSource(options.targetsFile, logger, options.filePollMs));
  }
  for (const spec of options.dnsTargets ?? []) {
    const dns = parseDnsTarget(spec);
    sources.push(
      new DnsTargetSource(dns, options.resolver ?? systemResolver, logger, options.dnsIntervalMs),
    );
  }
  return sources;
}
