import { KvMetricsWire, parseKvMetricsReport } from '@sluice/contracts';
import { EngineSnapshot } from '../engines/engine-adapter';
import { ScrapeFailure } from '../http/scrape-failure';
import { Target } from '../targets/target';

/** A docs/api.md#nats-subjects report as the bridge sends it: the contract's fields plus the publisher's name. */
export type BridgeReport = KvMetricsWire & { source: string };

export interface ReportSettings {
  readonly model?: string;
  readonly maxNumBatchedTokens?: number;
  readonly source: string;
}

/**
 * Turns a snapshot into one report per rank. `seq` increases per worker and rank for the
 * lifetime of the builder (one bridge run), across down/up cycles and target reloads.
 */
export class ReportBuilder {
  private readonly seqs = new Map<string, number>();

  constructor(private readonly settings: ReportSettings) {}

  build(target: Target, snapshot: EngineSnapshot, at: number): BridgeReport[] {
    const model = this.settings.model ?? snapshot.model;
    if (model === undefined)
      throw new ScrapeFailure('unparsable', 'the engine names no model (use --model)');
    const dpSize = snapshot.ranks.length;
    if (dpSize === 0) throw new ScrapeFailure('unparsable', 'the engine reports no rank');
    const reports = snapshot.ranks.map((rank, dpRank): BridgeReport => {
      const report: BridgeReport = {
        worker_id: target.workerId,
        model,
        endpoint: target.url,
        dp_rank: dpRank,
        dp_size: dpSize,
        active_decode_blocks: rank.activeDecodeBlocks,
        kv_total_blocks: rank.kvTotalBlocks,
        timestamp_ms: at,
        seq: 0,
        source: this.settings.source,
      };
      if (rank.numRequestsWaiting !== undefined)
        report.num_requests_waiting = rank.numRequestsWaiting;
      if (rank.activePrefillTokens !== undefined)
        report.active_prefill_tokens = rank.activePrefillTokens;
      if (rank.kvBlockSize !== undefined) report.kv_block_size = rank.kvBlockSize;
      if (this.settings.maxNumBatchedTokens !== undefined) {
        report.max_num_batched_tokens = this.settings.maxNumBatchedTokens;
      }
      // The contract's own validator is the last word: what it refuses is never published.
      const checked = parseKvMetricsReport(report);
      if (!checked.ok) throw new ScrapeFailure('unparsable', `report refused: ${checked.reason}`);
      return report;
    });
    // Sequence numbers are taken only once every rank's report is valid.
    for (const report of reports) report.seq = this.nextSeq(target.workerId, report.dp_rank ?? 0);
    return reports;
  }

  private nextSeq(workerId: string, rank: number): number {
    const key = `${workerId}\u0000${rank}`;
    const seq = this.seqs.get(key) ?? 0;
    this.seqs.set(key, seq + 1);
    return seq;
  }
}
