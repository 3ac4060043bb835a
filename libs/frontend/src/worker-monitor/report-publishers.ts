import { KvMetricsReport } from '@sluice/contracts';
import { RankState, WorkerEntry } from './worker-entry';

/**
 * Publishers of one rank remembered at once; beyond it the one heard from longest ago goes (a
 * report's `source` is anyone's to invent: memory must not grow with it).
 */
export const MAX_PUBLISHERS_PER_RANK = 4;

/** One publisher's latest report of a rank, and when it arrived. */
export interface Published {
  readonly report: KvMetricsReport;
  readonly receivedMs: number;
}

/** Who published a report: its `source`, or `''` for a report without one (the worker itself). */
export function publisherOf(r: KvMetricsReport): string {
  return r.source ?? '';
}

/** A publisher's name for a log line. */
export function publisherName(p: string): string {
  return p === '' ? 'one without a source (the worker itself?)' : `'${p}'`;
}

/**
 * docs/api.md#nats-subjects: a report whose `seq` is lower than the last one its publisher sent
 * for the rank is stale. A publisher that restarts counts from 0 again, so `seq` 0 always starts a
 * new run; and each publisher of a rank has a sequence of its own.
 */
export function isStale(state: RankState, r: KvMetricsReport): boolean {
  if (r.seq === undefined || r.seq === 0) return false;
  const p = publisherOf(r);
  const last = state.rivals?.get(p)?.report.seq ?? (state.publisher === p ? state.seq : undefined);
  return last !== undefined && r.seq < last;
}

/**
 * What the busy rule judges a rank on when a report arrives: the report itself, or — while two
 * or more publishers have reported the rank within `ttlMs` (a worker publishing its own reports
 * and an engine bridge scraping it, say) — the busiest of their latest reports, so that a
 * publisher that sees less of the load cannot make a busy worker look free (Dynamo's issue 7753:
 * the last write won). `conflict` says whether it was judged between publishers.
 */
export function judgeRank(
  worker: WorkerEntry,
  rank: number,
  state: RankState | undefined,
  r: KvMetricsReport,
  nowMs: number,
  ttlMs: number,
): Published & { readonly conflict: boolean } {
  const p = publisherOf(r);
  const own = { report: r, receivedMs: nowMs, conflict: false };
  if (!state) return own;
  if (!state.rivals) {
    if (state.publisher === p || nowMs - state.receivedMs > ttlMs) return own;
    const held = { report: reportOf(worker, rank, state), receivedMs: state.receivedMs };
    state.rivals = new Map([[state.publisher, held]]);
  }
  const rivals = state.rivals;
  // Map order is the order last heard from: the oldest first.
  rivals.delete(p);
  rivals.set(p, own);
  for (const [q, heard] of rivals) {
    if (nowMs - heard.receivedMs > ttlMs || rivals.size > MAX_PUBLISHERS_PER_RANK) rivals.delete(q);
  }
  if (rivals.size < 2) {
    state.rivals = undefined;
    return own;
  }
  let busiest: Published = own;
  for (const heard of rivals.values()) {
    if (busier(heard.report, busiest.report)) busiest = heard;
  }
  return { ...busiest, conflict: true };
}

/**
 * The busier of two reports of a rank: the higher KV usage (the share of blocks in use), then
 * more requests waiting, then more prompt tokens waiting for prefill.
 */
export function busier(a: KvMetricsReport, b: KvMetricsReport): boolean {
  const usage = (r: KvMetricsReport): number =>
    r.kvTotalBlocks > 0 ? r.activeDecodeBlocks / r.kvTotalBlocks : 0;
  if (usage(a) !== usage(b)) return usage(a) > usage(b);
  const waiting = (a.numRequestsWaiting ?? 0) - (b.numRequestsWaiting ?? 0);
  if (waiting !== 0) return waiting > 0;
  return (a.activePrefillTokens ?? 0) > (b.activePrefillTokens ?? 0);
}

/** The report a rank's state holds, rebuilt (a report is not kept while one publisher reports). */
function reportOf(worker: WorkerEntry, rank: number, state: RankState): KvMetricsReport {
  return {
    workerId: worker.id,
    model: worker.model,
    endpoint: worker.endpoint,
    dpRank: rank,
    dpSize: worker.dpSize,
    activeDecodeBlocks: state.activeDecodeBlocks,
    kvTotalBlocks: state.kvTotalBlocks,
    activePrefillTokens: state.prefillReported ? state.activePrefillTokens : undefined,
    numRequestsWaiting: state.numRequestsWaiting,
    maxNumBatchedTokens: state.maxNumBatchedTokens,
    kvBlockSize: worker.kvBlockSize,
    timestampMs: worker.lastReportMs,
    seq: state.seq,
    source: state.publisher === '' ? undefined : state.publisher,
  };
}
