/** Engines the bridge can read (docs/engines.md). */
export const ENGINE_NAMES = ['vllm', 'sglang', 'llamacpp', 'tgi'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

/** One data-parallel rank's load as read from the engine, before it becomes a docs/api.md#nats-subjects report. */
export interface EngineRankLoad {
  readonly activeDecodeBlocks: number;
  readonly kvTotalBlocks: number;
  readonly numRequestsWaiting?: number;
  readonly activePrefillTokens?: number;
  /** Tokens one block holds, when the engine's unit is not vLLM's 16-token block. */
  readonly kvBlockSize?: number;
}

/**
 * Something an engine's answer cannot tell, whatever its values: `kv_blocks`, its KV cache size
 * (its ranks are reported with 0 KV blocks, so the decode-blocks threshold never fires for them
 * while their waiting requests still count); `freshness`, how old its values are (they may be
 * older than the report's timestamp, which is when the bridge read them).
 */
export const SIGNAL_GAPS = ['kv_blocks', 'freshness'] as const;
export type SignalGapKind = (typeof SIGNAL_GAPS)[number];

export interface SignalGap {
  readonly gap: SignalGapKind;
  /** Why, for the log and /health: which engine version or setting, and what still works. */
  readonly reason: string;
}

/** What one scrape of an engine found: its ranks in dp_rank order (dp_size = ranks.length). */
export interface EngineSnapshot {
  /** Served model name, when the engine tells it (the --model flag overrides it). */
  readonly model: string | undefined;
  readonly ranks: readonly EngineRankLoad[];
  /** What this answer cannot tell (at most one entry per kind); absent: nothing. */
  readonly gaps?: readonly SignalGap[];
}

export interface GetOptions {
  /** 404, 405 and 501 answer `undefined` instead of failing the scrape (endpoint not enabled). */
  readonly optional?: boolean;
  /** Reuse a successful answer this long: static facts (model, capacity) need no fetch per scrape. */
  readonly cacheMs?: number;
}

/**
 * The engine's HTTP API, as one scrape sees it. Fails with a `ScrapeFailure` (error, timeout,
 * unparsable) that the scraper counts; adapters need not catch anything.
 */
export interface EngineHttp {
  /**
   * What an adapter learnt about this target (e.g. "ignores the metric-name filter"): kept
   * across scrapes, forgotten after a failed one (the engine may have restarted as another
   * version).
   */
  readonly notes: Set<string>;
  text(path: string, options?: GetOptions): Promise<string | undefined>;
  json(path: string, options?: GetOptions): Promise<unknown>;
}

/**
 * One engine's mapping to docs/engines.md's table: which paths to GET and how their answers become
 * rank loads. A new engine is one class implementing this.
 */
export interface EngineAdapter {
  readonly engine: EngineName;
  scrape(http: EngineHttp): Promise<EngineSnapshot>;
}

/** How many data-parallel ranks a report may describe (docs/api.md#nats-subjects's dp_size limit). */
export const MAX_RANKS = 1024;
