import { EngineAdapter, EngineName } from './engine-adapter';
import { LlamacppAdapter, LlamacppKvCache } from './llamacpp.adapter';
import { SglangAdapter } from './sglang.adapter';
import { TgiAdapter } from './tgi.adapter';
import { VllmAdapter } from './vllm.adapter';

/** What the operator says of the engines that they do not export themselves. */
export interface AdapterSettings {
  readonly llamacppKvCache?: LlamacppKvCache;
}

const ADAPTERS: Record<EngineName, (s: AdapterSettings) => EngineAdapter> = {
  vllm: () => new VllmAdapter(),
  sglang: () => new SglangAdapter(),
  llamacpp: (s) => new LlamacppAdapter(s.llamacppKvCache),
  tgi: () => new TgiAdapter(),
};

export function createEngineAdapter(
  engine: EngineName,
  settings: AdapterSettings = {},
): EngineAdapter {
  return ADAPTERS[engine](settings);
}
