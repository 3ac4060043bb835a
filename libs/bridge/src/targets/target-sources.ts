import { BridgeLogger } from '../bridge-logger';
import { EngineBridgeOptions } from '../engine-bridge.options';
import { DnsTargetSource, systemResolver } from './dns-target.source';
import { parseDnsTarget, parseTargetSpec } from './target';
import { StaticTargetSource, TargetSource } from './target-source';
import { TargetsFileSource } from './targets-file.source';

/** The sources the options name; a malformed `--target` or `--dns-target` throws here. */
export function buildTargetSources(
  options: EngineBridgeOptions,
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
