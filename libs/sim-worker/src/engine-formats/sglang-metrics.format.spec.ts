import { BUSY_RANK, engineState, IDLE_RANK } from './engine-state.fixture';
import { renderSglangMetrics } from './sglang-metrics.format';

/** Rank 0: 870 of 1000 blocks of 16, 3 running, 2 queued; rank 1 idle but for its counters. */
const state = engineState([
  { ...BUSY_RANK, promptTokensTotal: 12000, generationTokensTotal: 700 },
  { ...IDLE_RANK, promptTokensTotal: 500, generationTokensTotal: 50 },
]);

const rank = (r: number): string =>
  `{dp_rank="${r}",engine_type="unified",model_name="Qwen/Qwen3-0.6B",pp_rank="0",tp_rank="0"}`;

describe('renderSglangMetrics', () => {
  it("writes the scheduler's gauges once per rank with SGLang's names and labels", () => {
    const sut = renderSglangMetrics(state).split('\n');
    expect(sut.slice(0, 12)).toEqual([
      '# HELP sglang:num_running_reqs The number of running requests.',
      '# TYPE sglang:num_running_reqs gauge',
      `sglang:num_running_reqs${rank(0)} 3.0`,
      `sglang:num_running_reqs${rank(1)} 0.0`,
      '# HELP sglang:num_used_tokens The number of used tokens.',
      '# TYPE sglang:num_used_tokens gauge',
      `sglang:num_used_tokens${rank(0)} 13920.0`,
      `sglang:num_used_tokens${rank(1)} 0.0`,
      '# HELP sglang:token_usage The token usage.',
      '# TYPE sglang:token_usage gauge',
      `sglang:token_usage${rank(0)} 0.87`,
      `sglang:token_usage${rank(1)} 0.0`,
    ]);
    expect(sut).toContain(
      '# HELP sglang:num_queue_reqs The number of requests in the waiting queue.',
    );
    expect(sut).toContain(`sglang:num_queue_reqs${rank(0)} 2.0`);
    expect(sut).toContain(`sglang:max_total_num_tokens${rank(1)} 16000.0`);
  });

  it('counts tokens once for the server, over every rank, without _created series', () => {
    const sut = renderSglangMetrics(state);
    expect(sut).toContain(
      '# HELP sglang:prompt_tokens_total Number of prefill tokens processed.\n' +
        '# TYPE sglang:prompt_tokens_total counter\n' +
        'sglang:prompt_tokens_total{model_name="Qwen/Qwen3-0.6B"} 12500.0\n',
    );
    expect(sut).toContain('sglang:generation_tokens_total{model_name="Qwen/Qwen3-0.6B"} 750.0\n');
    expect(sut).not.toContain('_created');
  });
});
