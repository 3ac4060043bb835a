import { SimRankLoad } from '../engine/rank-scheduler';
import { EngineState } from './engine-state.reader';
import { PrometheusTextWriter, Sample } from './prometheus-text.writer';

/**
 * `GET /metrics` as SGLang writes it: the scheduler's gauges once per data-parallel rank
 * (labels `dp_rank`, `engine_type`, `model_name`, `pp_rank`, `tp_rank`), the tokenizer's token
 * counters once per server, and no `_created` series (SGLang runs prometheus_client in
 * multiprocess mode). The HELP texts are those of SGLang's metrics collector.
 */
export function renderSglangMetrics(state: EngineState): string {
  const perRank = (value: (load: SimRankLoad) => number): Sample[] =>
    state.ranks.map((load, rank) => ({
      labels: {
        dp_rank: String(rank),
        engine_type: 'unified',
        model_name: state.model,
        pp_rank: '0',
        tp_rank: '0',
      },
      value: value(load),
    }));
  const maxTotalNumTokens = state.kvTotalBlocks * state.blockSize;
  const server = (value: (load: SimRankLoad) => number): Sample[] => [
    { labels: { model_name: state.model }, value: state.ranks.reduce((n, l) => n + value(l), 0) },
  ];
  return new PrometheusTextWriter()
    .gauge(
      'sglang:num_running_reqs',
      'The number of running requests.',
      perRank((load) => load.runningRequests),
    )
    .gauge(
      'sglang:num_used_tokens',
      'The number of used tokens.',
      perRank((load) => load.activeDecodeBlocks * state.blockSize),
    )
    .gauge(
      'sglang:token_usage',
      'The token usage.',
      perRank((load) => load.activeDecodeBlocks / state.kvTotalBlocks),
    )
    .gauge(
      'sglang:num_queue_reqs',
      'The number of requests in the waiting queue.',
      perRank((load) => load.waitingRequests),
    )
    .gauge(
      'sglang:cache_hit_rate',
      'The prefix cache hit rate.',
      perRank(() => 0),
    )
    .gauge(
      'sglang:max_total_num_tokens',
      'Maximum total number of tokens in the KV cache pool.',
      perRank(() => maxTotalNumTokens),
    )
    .counter(
      'sglang:prompt_tokens',
      'Number of prefill tokens processed.',
      server((load) => load.promptTokensTotal),
    )
    .counter(
      'sglang:generation_tokens',
      'Number of generation tokens processed.',
      server((load) => load.generationTokensTotal),
    )
    .toString();
}
