import { Counter, Gauge, Registry } from 'prom-client';
import { SIGNAL_GAPS, SignalGapKind } from '../engines/engine-adapter';
import { SCRAPE_RESULTS, ScrapeResult } from '../http/scrape-failure';

export const SCRAPES_TOTAL = 'sluice_bridge_scrapes_total';
export const REPORT_AGE_SECONDS = 'sluice_bridge_report_age_seconds';
export const SIGNAL_GAP = 'sluice_bridge_signal_gap';

/** Newest report time (epoch ms) per worker id, asked for at collect time. */
export type ReportTimes = () => Iterable<readonly [workerId: string, reportedAtMs: number]>;

const shared = new WeakMap<Registry, BridgeMetrics>();

/**
 * The bridge's series (docs/engines.md). One instance per registry: several bridges (one per
 * engine, inside the frontend) share the series, each removing only its own workers.
 */
export class BridgeMetrics {
  private readonly scrapes: Counter<'worker_id' | 'result'>;
  private readonly gaps: Gauge<'worker_id' | 'gap'>;
  private readonly sources = new Set<ReportTimes>();

  private constructor(
    registry: Registry,
    private readonly now: () => number,
  ) {
    this.scrapes = new Counter({
      name: SCRAPES_TOTAL,
      help: 'Engine scrapes by the bridge, by worker and result (ok, error, timeout, unparsable)',
      labelNames: ['worker_id', 'result'],
      registers: [registry],
    });
    this.gaps = new Gauge({
      name: SIGNAL_GAP,
      help:
        "1 while the worker's engine does not tell what gap names, else 0: kv_blocks, its KV " +
        'cache size (it is reported with 0 KV blocks, so the decode-blocks threshold cannot ' +
        'fire for it; its waiting requests still count); freshness, how old its values are ' +
        '(they may be older than the report age says). The bridge logs why once per worker',
      labelNames: ['worker_id', 'gap'],
      registers: [registry],
    });
    const sources = this.sources;
    const clock = this.now;
    const age: Gauge<'worker_id'> = new Gauge({
      name: REPORT_AGE_SECONDS,
      help: 'Seconds since the newest load report the bridge published for the worker was measured',
      labelNames: ['worker_id'],
      registers: [registry],
      collect() {
        age.reset();
        const now = clock();
        for (const source of sources) {
          for (const [workerId, at] of source()) {
            age.set({ worker_id: workerId }, Math.max(0, (now - at) / 1000));
          }
        }
      },
    });
  }

  static for(registry: Registry, now: () => number = Date.now): BridgeMetrics {
    let metrics = shared.get(registry);
    if (!metrics) {
      metrics = new BridgeMetrics(registry, now);
      shared.set(registry, metrics);
    }
    return metrics;
  }

  /** Every result starts at 0, so a rate over the series works from the first scrape. */
  addWorker(workerId: string): void {
    for (const result of SCRAPE_RESULTS) this.scrapes.inc({ worker_id: workerId, result }, 0);
    this.setGaps(workerId, []);
  }

  setGaps(workerId: string, present: readonly SignalGapKind[]): void {
    for (const gap of SIGNAL_GAPS) {
      this.gaps.set({ worker_id: workerId, gap }, present.includes(gap) ? 1 : 0);
    }
  }

  countScrape(workerId: string, result: ScrapeResult): void {
    this.scrapes.inc({ worker_id: workerId, result });
  }

  removeWorker(workerId: string): void {
    for (const result of SCRAPE_RESULTS) this.scrapes.remove({ worker_id: workerId, result });
    for (const gap of SIGNAL_GAPS) this.gaps.remove({ worker_id: workerId, gap });
  }

  addReportTimes(source: ReportTimes): () => void {
    this.sources.add(source);
    return () => this.sources.delete(source);
  }
}
