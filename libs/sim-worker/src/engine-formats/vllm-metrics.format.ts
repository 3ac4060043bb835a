import { SimRankLoad } from '../engine/rank-scheduler';
import { EngineState } from './engine-state.reader';
import { Labels, PrometheusTextWriter, Sample } from './prometheus-text.writer';

/**
 * `GET /metrics` as vLLM's V1 engine (v0.10+) writes it: one `engine` label value per
 * data-parallel rank, `model_name` the served model, the HELP texts of vLLM's
 * `PrometheusStatLogger`. The simulator never preempts and has no prefix cache, which the
 * preemption counter (0) and `enable_prefix_caching="False"` say.
 */
export function renderVllmMetrics(state: EngineState, only?: ReadonlySet<string>): string {
  const perRank = (value: (load: SimRankLoad) => number): Sample[] =>
    state.ranks.map((load, rank) => ({
      labels: { engine: String(rank), model_name: state.model },
      value: value(load),
    }));
  const created = state.startedAtMs / 1000;
  return new PrometheusTextWriter(only)
    .gauge(
      'vllm:num_requests_running',
      'Number of requests in model execution batches.',
      perRank((load) => load.runningRequests),
    )
    .gauge(
      'vllm:num_requests_waiting',
      'Number of requests waiting to be processed.',
      perRank((load) => load.waitingRequests),
    )
    .gauge(
      'vllm:kv_cache_usage_perc',
      'KV-cache usage. 1 means 100 percent usage.',
      perRank((load) => load.activeDecodeBlocks / state.kvTotalBlocks),
    )
    .counter(
      'vllm:num_preemptions',
      'Cumulative number of preemption from the engine.',
      perRank(() => 0),
      created,
    )
    .counter(
      'vllm:prompt_tokens',
      'Number of prefill tokens processed.',
      perRank((load) => load.promptTokensTotal),
      created,
    )
    .counter(
      'vllm:generation_tokens',
      'Number of generation tokens processed.',
      perRank((load) => load.generationTokensTotal),
      created,
    )
    .gauge(
      'vllm:cache_config_info',
      'Information of the LLMEngine CacheConfig',
      state.ranks.map((_, rank) => ({ labels: cacheConfigLabels(state, rank), value: 1 })),
    )
    .toString();
}

/** vLLM's `CacheConfig.metrics_info()` plus `engine`: every value a Python `str()`. */
function cacheConfigLabels(state: EngineState, rank: number): Labels {
  return {
    block_size: String(state.blockSize),
    cache_dtype: 'auto',
    calculate_kv_scales: 'False',
    cpu_offload_gb: '0',
    enable_prefix_caching: 'False',
    engine: String(rank),
    gpu_memory_utilization: '0.9',
    is_attention_free: 'False',
    num_cpu_blocks: 'None',
    num_gpu_blocks: String(state.kvTotalBlocks),
    num_gpu_blocks_override: 'None',
    prefix_caching_hash_algo: 'builtin',
    sliding_window: 'None',
    swap_space: '4',
    swap_space_bytes: '4294967296',
  };
}
