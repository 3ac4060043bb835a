import { BridgeLogger } from './bridge-logger';
import { SignalGap } from './engines/engine-adapter';
import { BridgeMetrics } from './metrics/bridge-metrics';
import { ScrapedWorker } from './scraped-worker';

/**
 * Records what a worker's engine cannot tell, after each good scrape: the metric and the
 * entry (for /health) follow the engine's answer; the log says why the first time each kind
 * appears for the worker, so a fleet of old engines does not repeat it every scrape.
 */
export function updateSignalGaps(
  entry: ScrapedWorker,
  gaps: readonly SignalGap[],
  out: { readonly logger: BridgeLogger; readonly metrics: BridgeMetrics },
): void {
  const id = entry.target.workerId;
  for (const g of gaps) {
    if (entry.loggedGaps.has(g.gap)) continue;
    entry.loggedGaps.add(g.gap);
    out.logger.warn(`worker ${id} at ${entry.target.url} cannot tell its ${g.gap}: ${g.reason}`);
  }
  if (!sameKinds(entry.signalGaps, gaps))
    out.metrics.setGaps(
      id,
      gaps.map((g) => g.gap),
    );
  entry.signalGaps = gaps;
}

function sameKinds(a: readonly SignalGap[], b: readonly SignalGap[]): boolean {
  return a.length === b.length && a.every((g) => b.some((h) => h.gap === g.gap));
}
