import { EngineAdapter, EngineName } from './engine-adapter';
import { LlamacppAdapter } from './llamacpp.adapter';
import { SglangAdapter } from './sglang.adapter';
import { TgiAdapter } from './tgi.adapter';
import { VllmAdapter } from './vllm.adapter';

const ADAPTERS: Record<EngineName, () => EngineAdapter> = {
  vllm: () => new VllmAdapter(),
  sglang: () => new SglangAdapter(),
  llamacpp: () => new LlamacppAdapter(),
  tgi: () => new TgiAdapter(),
};

export function createEngineAdapter(engine: EngineName): EngineAdapter {
  return ADAPTERS[engine]();
}
