import { BUSY_RANK, engineState, IDLE_RANK } from './engine-state.fixture';
import { EngineState } from './engine-state.reader';
import { renderVllmMetrics } from './vllm-metrics.format';

/** Rank 0 busy (870 of 1000 blocks, 3 running, 2 queued), every other rank idle. */
function stateOf(dpSize: number): EngineState {
  const counted = { promptTokensTotal: 12000, generationTokensTotal: 700 };
  return engineState(
    Array.from({ length: dpSize }, (_, r) => (r === 0 ? { ...BUSY_RANK, ...counted } : IDLE_RANK)),
  );
}

describe('renderVllmMetrics', () => {
  it('writes the load families of vLLM V1, one engine label value per rank', () => {
    const sut = renderVllmMetrics(stateOf(2));
    const model = 'model_name="Qwen/Qwen3-0.6B"';
    const head = sut.split('\n').slice(0, 24);
    expect(head).toEqual([
      '# HELP vllm:num_requests_running Number of requests in model execution batches.',
      '# TYPE vllm:num_requests_running gauge',
      `vllm:num_requests_running{engine="0",${model}} 3.0`,
      `vllm:num_requests_running{engine="1",${model}} 0.0`,
      '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.',
      '# TYPE vllm:num_requests_waiting gauge',
      `vllm:num_requests_waiting{engine="0",${model}} 2.0`,
      `vllm:num_requests_waiting{engine="1",${model}} 0.0`,
      '# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.',
      '# TYPE vllm:kv_cache_usage_perc gauge',
      `vllm:kv_cache_usage_perc{engine="0",${model}} 0.87`,
      `vllm:kv_cache_usage_perc{engine="1",${model}} 0.0`,
      '# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.',
      '# TYPE vllm:num_preemptions_total counter',
      `vllm:num_preemptions_total{engine="0",${model}} 0.0`,
      `vllm:num_preemptions_total{engine="1",${model}} 0.0`,
      '# HELP vllm:num_preemptions_created Cumulative number of preemption from the engine.',
      '# TYPE vllm:num_preemptions_created gauge',
      `vllm:num_preemptions_created{engine="0",${model}} 1.76447e+09`,
      `vllm:num_preemptions_created{engine="1",${model}} 1.76447e+09`,
      '# HELP vllm:prompt_tokens_total Number of prefill tokens processed.',
      '# TYPE vllm:prompt_tokens_total counter',
      `vllm:prompt_tokens_total{engine="0",${model}} 12000.0`,
      `vllm:prompt_tokens_total{engine="1",${model}} 0.0`,
    ]);
    expect(sut).toContain(
      '# HELP vllm:generation_tokens_total Number of generation tokens processed.\n' +
        '# TYPE vllm:generation_tokens_total counter\n' +
        `vllm:generation_tokens_total{engine="0",${model}} 700.0\n`,
    );
    expect(sut.endsWith('\n')).toBe(true);
  });

  it('states the KV cache of each rank in cache_config_info, as num_gpu_blocks of block_size', () => {
    const lines = renderVllmMetrics(stateOf(2)).split('\n');
    const info = lines.filter((line) => line.startsWith('vllm:cache_config_info{'));
    expect(info).toHaveLength(2);
    expect(info[1]).toBe(
      'vllm:cache_config_info{block_size="16",cache_dtype="auto",calculate_kv_scales="False",' +
        'cpu_offload_gb="0",enable_prefix_caching="False",engine="1",' +
        'gpu_memory_utilization="0.9",is_attention_free="False",num_cpu_blocks="None",' +
        'num_gpu_blocks="1000",num_gpu_blocks_override="None",prefix_caching_hash_algo="builtin",' +
        'sliding_window="None",swap_space="4",swap_space_bytes="4294967296"} 1.0',
    );
    expect(lines).toContain(
      '# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig',
    );
  });

  it('writes every family once however many ranks there are', () => {
    const sut = renderVllmMetrics(stateOf(4));
    const running = sut.split('\n').filter((l) => l.startsWith('vllm:num_requests_running{'));
    expect(running.map((l) => /engine="(\d+)"/.exec(l)?.[1])).toEqual(['0', '1', '2', '3']);
    expect(sut.match(/^# TYPE vllm:num_requests_running /gm)).toHaveLength(1);
  });
});
