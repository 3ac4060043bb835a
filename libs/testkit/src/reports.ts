import { KvMetricsReport, KvMetricsWire } from '@sluice/contracts';

/** The model the simulated worker serves by default. */
export const MODEL = 'Qwen/Qwen3-0.6B';

/** docs/api.md#errors: the exact body of the overload rejection. */
export const OVERLOAD_BODY =
  '{"message":"Service temporarily unavailable: All workers are busy, please retry later","type":"service_unavailable","code":503}';

/** The fields of a docs/api.md#nats-subjects load report a test or bench sets; the rest take defaults. */
export interface ReportFields {
  worker_id: string;
  endpoint: string;
  model?: string;
  dp_rank?: number;
  dp_size?: number;
  active_decode_blocks?: number;
  kv_total_blocks?: number;
  active_prefill_tokens?: number;
  max_num_batched_tokens?: number;
  /** Who publishes the report (e.g. an engine bridge); absent: the worker itself. */
  source?: string;
}

/** A load report as a worker sends it: rank 0 of 1, an idle cache of 100 blocks, stamped now. */
export function kvReport(fields: ReportFields): KvMetricsWire {
  return {
    model: MODEL,
    dp_rank: 0,
    dp_size: 1,
    active_decode_blocks: 0,
    kv_total_blocks: 100,
    active_prefill_tokens: 0,
    timestamp_ms: Date.now(),
    ...fields,
  };
}

/**
 * A report as the monitor holds it once parsed (for unit specs of the registry and what reads
 * it): rank 0 of 1 of MODEL at `http://<workerId>:9001`, an idle cache of 100 blocks, no
 * optional field.
 */
export function parsedReport(
  workerId: string,
  over: Partial<KvMetricsReport> = {},
): KvMetricsReport {
  return {
    workerId,
    model: MODEL,
    endpoint: `http://${workerId}:9001`,
    dpRank: 0,
    dpSize: 1,
    activeDecodeBlocks: 0,
    kvTotalBlocks: 100,
    activePrefillTokens: 0,
    maxNumBatchedTokens: undefined,
    timestampMs: undefined,
    numRequestsWaiting: undefined,
    seq: undefined,
    ...over,
  };
}
