/** One data-parallel rank's load report (docs/api.md#nats-subjects), after validation. */
export interface KvMetricsReport {
  readonly workerId: string;
  readonly model: string;
  readonly endpoint: string;
  readonly dpRank: number;
  readonly dpSize: number;
  readonly activeDecodeBlocks: number;
  readonly kvTotalBlocks: number;
  /**
   * Absent when the worker does not report it (real engines mostly don't): the frontend then
   * judges the rank on its own bookkeeping of prompt tokens sent and not yet answered (docs/api.md#nats-subjects).
   */
  readonly activePrefillTokens: number | undefined;
  /** Requests queued in the engine; absent: the waiting-requests threshold never fires. */
  readonly numRequestsWaiting: number | undefined;
  /** Absent when the worker does not report it; the `frac` threshold then never fires. */
  readonly maxNumBatchedTokens: number | undefined;
  /**
   * Tokens one of the rank's KV blocks holds, when the publisher knows it: what the frontend
   * reserves for a request it sends is its tokens in these blocks (16, vLLM's default, when
   * absent). A llama.cpp slot is one block of its context window.
   */
  readonly kvBlockSize?: number;
  readonly timestampMs: number | undefined;
  /** Per-publisher sequence number: a lower one than the last seen for the rank is stale. */
  readonly seq: number | undefined;
  /** Who published the report (e.g. an engine bridge), shown on the status page. */
  readonly source?: string;
}

/** The wire form a worker publishes (snake_case, as Dynamo's workers do). */
export interface KvMetricsWire {
  worker_id: string;
  model: string;
  endpoint: string;
  dp_rank?: number;
  dp_size?: number;
  active_decode_blocks: number;
  kv_total_blocks: number;
  active_prefill_tokens?: number;
  num_requests_waiting?: number;
  max_num_batched_tokens?: number;
  /** Optional, Sluice's own: tokens one KV block holds (see KvMetricsReport.kvBlockSize). */
  kv_block_size?: number;
  timestamp_ms?: number;
  seq?: number;
  /** Optional, Sluice's own: who published the report (e.g. `bridge vllm host:pid`). */
  source?: string;
}

export interface WorkerDownWire {
  worker_id: string;
}

/** Limits that keep one hostile report from costing unbounded memory. */
export const REPORT_LIMITS = {
  maxIdLength: 256,
  maxModelLength: 256,
  maxEndpointLength: 2048,
  maxDpSize: 1024,
  maxSourceLength: 256,
} as const;

export type ParseResult<T> = { ok: true; value: T } | { ok: false; reason: string };

const isCount = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function boundedString(v: unknown, max: number): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= max;
}

/**
 * The worker id travels in a response header (docs/security.md#limits-and-hardening): printable ASCII only, so a report
 * can never make a request fail after the worker did the work.
 */
export function isHeaderValue(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

function isHttpUrl(v: string): boolean {
  if (!v.startsWith('http://') && !v.startsWith('https://')) return false;
  return URL.canParse(v);
}

/**
 * Endpoints already found valid, with trailing slashes removed. A worker sends the same
 * endpoint in every report, so the URL parse runs once per worker instead of once per report.
 * Bounded: a flood of invented endpoints empties it and costs what no cache would.
 */
const knownEndpoints = new Map<string, string>();
const MAX_KNOWN_ENDPOINTS = 4096;

function validEndpoint(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const known = knownEndpoints.get(v);
  if (known !== undefined) return known;
  if (!boundedString(v, REPORT_LIMITS.maxEndpointLength) || !isHttpUrl(v)) return undefined;
  if (knownEndpoints.size >= MAX_KNOWN_ENDPOINTS) knownEndpoints.clear();
  const normalized = withoutTrailingSlashes(v);
  knownEndpoints.set(v, normalized);
  return normalized;
}

function withoutTrailingSlashes(v: string): string {
  let end = v.length;
  while (end > 0 && v.charCodeAt(end - 1) === 0x2f) end--;
  return end === v.length ? v : v.slice(0, end);
}

/**
 * Validates a decoded kv_metrics payload. Hand-written rather than class-validator: it runs for
 * every report of every rank (tens of thousands per second) and must not allocate much.
 */
export function parseKvMetricsReport(raw: unknown): ParseResult<KvMetricsReport> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: 'payload is not a JSON object' };
  }
  const r = raw as Record<string, unknown>;
  if (!boundedString(r.worker_id, REPORT_LIMITS.maxIdLength) || !isHeaderValue(r.worker_id)) {
    return bad('worker_id');
  }
  if (!boundedString(r.model, REPORT_LIMITS.maxModelLength)) return bad('model');
  const endpoint = validEndpoint(r.endpoint);
  if (endpoint === undefined) return bad('endpoint');
  if (!isCount(r.active_decode_blocks)) return bad('active_decode_blocks');
  if (!isCount(r.kv_total_blocks)) return bad('kv_total_blocks');
  const prefill = r.active_prefill_tokens ?? undefined;
  if (prefill !== undefined && !isCount(prefill)) return bad('active_prefill_tokens');
  const waiting = r.num_requests_waiting ?? undefined;
  if (waiting !== undefined && !isCount(waiting)) return bad('num_requests_waiting');
  const dpSize = r.dp_size ?? 1;
  if (!isCount(dpSize) || dpSize < 1 || dpSize > REPORT_LIMITS.maxDpSize) return bad('dp_size');
  const dpRank = r.dp_rank ?? 0;
  if (!isCount(dpRank) || dpRank >= dpSize) return bad('dp_rank');
  const maxBatched = r.max_num_batched_tokens ?? undefined;
  if (maxBatched !== undefined && !isCount(maxBatched)) return bad('max_num_batched_tokens');
  const blockSize = r.kv_block_size ?? undefined;
  if (blockSize !== undefined && (!isCount(blockSize) || blockSize < 1))
    return bad('kv_block_size');
  const ts = r.timestamp_ms ?? undefined;
  if (ts !== undefined && !isCount(ts)) return bad('timestamp_ms');
  const seq = r.seq ?? undefined;
  if (seq !== undefined && !isCount(seq)) return bad('seq');
  const source = r.source ?? undefined;
  if (
    source !== undefined &&
    (!boundedString(source, REPORT_LIMITS.maxSourceLength) || !isHeaderValue(source))
  ) {
    return bad('source');
  }
  return {
    ok: true,
    value: {
      workerId: r.worker_id,
      model: r.model,
      endpoint,
      dpRank,
      dpSize,
      activeDecodeBlocks: r.active_decode_blocks,
      kvTotalBlocks: r.kv_total_blocks,
      activePrefillTokens: prefill,
      numRequestsWaiting: waiting,
      maxNumBatchedTokens: maxBatched,
      ...(blockSize === undefined ? {} : { kvBlockSize: blockSize }),
      timestampMs: ts,
      seq,
      source,
    },
  };
}

export function parseWorkerDown(raw: unknown): ParseResult<{ workerId: string }> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: 'payload is not a JSON object' };
  }
  const id = (raw as Record<string, unknown>).worker_id;
  if (!boundedString(id, REPORT_LIMITS.maxIdLength)) return bad('worker_id');
  return { ok: true, value: { workerId: id } };
}

function bad(field: string): { ok: false; reason: string } {
  return { ok: false, reason: `missing or invalid field '${field}'` };
}
