export { EngineBridge } from './engine-bridge';
export { VLLM_FILTERED_PATH } from './engines/vllm.adapter';
export { LLAMACPP_KV_CACHES, type LlamacppKvCache } from './engines/llamacpp.adapter';
export { BRIDGE_DEFAULTS, type EngineBridgeOptions } from './engine-bridge.options';
export type { BridgeWorkerStatus, WorkerState } from './scraped-worker';
export type { BridgeLogger } from './bridge-logger';
export {
  ENGINE_NAMES,
  type EngineAdapter,
  type EngineHttp,
  type EngineName,
  type EngineSnapshot,
  type EngineRankLoad,
  SIGNAL_GAPS,
  type SignalGap,
  type SignalGapKind,
} from './engines/engine-adapter';
export type { ScrapeResult } from './http/scrape-failure';
export type { BridgeReport } from './scrape/report-builder';
export type { DnsResolver } from './targets/dns-target.source';
export { parseTargetSpec, TargetSpecError, type Target } from './targets/target';
export { SCRAPES_TOTAL, REPORT_AGE_SECONDS, SIGNAL_GAP } from './metrics/bridge-metrics';
export { startBridgeOpsServer, type BridgeOpsServer } from './bridge-ops.server';
export {
  BRIDGE_USAGE,
  bridgeEnvName,
  parseBridgeFlags,
  type BridgeFlags,
} from './config/parse-bridge-flags';
export { BridgeConfigError } from './config/bridge-config.error';
