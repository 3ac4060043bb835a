import { BUSY_RANK, engineState, IDLE_RANK } from './engine-state.fixture';
import { SIM_SGLANG_VERSION, sglangLoads, sglangServerInfo } from './sglang-loads.format';

/** Rank 0: 870 of 1000 blocks of 16, 3 running, 2 queued, 1200 prompt tokens to prefill. */
const state = engineState([{ ...BUSY_RANK, activePrefillTokens: 1200 }, IDLE_RANK]);

describe('sglangLoads', () => {
  it('answers one entry per rank with tokens counted as blocks x block size', () => {
    const sut = sglangLoads(state);
    expect(sut.timestamp).toBe('2025-11-30T02:33:32.345000+00:00');
    expect(sut.version).toBe(SIM_SGLANG_VERSION);
    expect(sut.dp_rank_count).toBe(2);
    expect(sut.loads[0]).toEqual({
      dp_rank: 0,
      num_running_reqs: 3,
      num_waiting_reqs: 2,
      num_waiting_uncached_tokens: 1200,
      num_used_tokens: 13920,
      num_total_tokens: 13920 + 1200,
      max_total_num_tokens: 16000,
      token_usage: 0.87,
      gen_throughput: 0,
      cache_hit_rate: 0,
      utilization: 0.87,
      max_running_requests: 256,
      queues: { waiting: 2, grammar: 0, paused: 0, retracted: 0 },
      num_total_reqs: 5,
    });
    expect(sut.loads[1]).toMatchObject({
      dp_rank: 1,
      num_running_reqs: 0,
      num_waiting_reqs: 0,
      num_used_tokens: 0,
      max_total_num_tokens: 16000,
      token_usage: 0,
    });
  });

  it('sums and averages the ranks as SGLang does', () => {
    expect(sglangLoads(state).aggregate).toEqual({
      total_running_reqs: 3,
      total_waiting_reqs: 2,
      total_reqs: 5,
      avg_token_usage: 0.435,
      avg_throughput: 0,
      avg_utilization: 0.435,
    });
  });

  it('answers only the asked rank, and no entry for a rank that does not exist', () => {
    expect(sglangLoads(state, 1).loads.map((l) => l.dp_rank)).toEqual([1]);
    const none = sglangLoads(state, 5);
    expect(none.loads).toEqual([]);
    expect(none.dp_rank_count).toBe(0);
    expect(none.aggregate.avg_token_usage).toBe(0);
  });
});

describe('sglangServerInfo', () => {
  it('states the served model, the page size and the KV capacity of one rank', () => {
    const sut = sglangServerInfo(state);
    expect(sut).toMatchObject({
      served_model_name: 'Qwen/Qwen3-0.6B',
      model_path: 'Qwen/Qwen3-0.6B',
      page_size: 16,
      max_total_num_tokens: 16000,
      dp_size: 2,
      tp_size: 1,
      max_running_requests: 256,
      chunked_prefill_size: 8192,
      version: SIM_SGLANG_VERSION,
    });
    expect(sut.internal_states).toHaveLength(2);
  });
});
