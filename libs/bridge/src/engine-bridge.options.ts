import { EventPublisher } from '@sluice/bus';
import { Registry } from 'prom-client';
import { Dispatcher } from 'undici';
import { BridgeLogger } from './bridge-logger';
import { EngineAdapter, EngineName } from './engines/engine-adapter';
import { LlamacppKvCache } from './engines/llamacpp.adapter';
import { TargetSourceOptions } from './targets/target-sources';

export const BRIDGE_DEFAULTS = {
  scrapeIntervalMs: 250,
  scrapeTimeoutMs: 1000,
  downAfterMs: 3000,
  /** Scrapes with requests in flight at once; more wait their turn (see ScrapeSlots). */
  maxConcurrentScrapes: 256,
  namespace: 'dynamo',
} as const;

/** What the bridge needs; the standalone app builds it from flags, the frontend from its own. */
export interface EngineBridgeOptions extends TargetSourceOptions {
  readonly engine: EngineName;
  readonly namespace: string;
  readonly scrapeIntervalMs?: number;
  readonly scrapeTimeoutMs?: number;
  readonly downAfterMs?: number;
  /** Overrides the model name the engine reports. */
  readonly model?: string;
  readonly maxNumBatchedTokens?: number;
  /** How llama.cpp servers hold their KV cache (`--llamacpp-kv-cache`); default per-slot. */
  readonly llamacppKvCache?: LlamacppKvCache;
  /** Where reports and worker_down go: NATS, the in-process bus, or a test's recorder. */
  readonly publisher: Pick<EventPublisher, 'publish'>;
  /** The bridge's series are registered here (the frontend passes its own registry). */
  readonly registry: Registry;
  /** `"source"` of every report; default `bridge <engine> <hostname>:<pid>`. */
  readonly source?: string;
  readonly logger?: BridgeLogger;

  // Seams for tests and embedding; defaults are the real thing (the targets' own: above).
  readonly now?: () => number;
  /** In [0, 1): spreads each target's first scrape over its first interval (default Math.random). */
  readonly random?: () => number;
  readonly adapter?: EngineAdapter;
  readonly dispatcher?: Dispatcher;
  readonly maxBodyBytes?: number;
  readonly maxConcurrentScrapes?: number;
}
