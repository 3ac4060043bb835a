import { SimRankLoad } from '../engine/rank-scheduler';
import { EngineState } from './engine-state.reader';

/** Reported where SGLang reports its release; marks the answers as simulated. */
export const SIM_SGLANG_VERSION = '0.5.4+sluice.sim';

/**
 * One entry of SGLang's `GET /v1/loads`, in SGLang's key order. SGLang leaves the entry's own
 * `timestamp` out of the JSON (`_loads_dict_factory`), so no measurement time is served.
 */
export interface SglangRankLoad {
  dp_rank: number;
  num_running_reqs: number;
  num_waiting_reqs: number;
  /** Prompt tokens waiting for prefill compute. */
  num_waiting_uncached_tokens: number;
  num_used_tokens: number;
  /** Used tokens plus pending prefill tokens. */
  num_total_tokens: number;
  max_total_num_tokens: number;
  token_usage: number;
  /** Not measured by the simulator. */
  gen_throughput: number;
  cache_hit_rate: number;
  utilization: number;
  max_running_requests: number;
  queues: { waiting: number; grammar: number; paused: number; retracted: number };
  num_total_reqs: number;
}

export interface SglangLoads {
  /** ISO 8601 with `+00:00`, as Python's `datetime.isoformat()`. */
  timestamp: string;
  version: string;
  dp_rank_count: number;
  loads: SglangRankLoad[];
  aggregate: {
    total_running_reqs: number;
    total_waiting_reqs: number;
    total_reqs: number;
    avg_token_usage: number;
    avg_throughput: number;
    avg_utilization: number;
  };
}

/**
 * SGLang's `GET /v1/loads`: one entry per data-parallel rank (only `dpRank` when given; none
 * when that rank does not exist, as SGLang answers). Tokens are KV blocks × block size.
 */
export function sglangLoads(state: EngineState, dpRank?: number): SglangLoads {
  const loads = state.ranks
    .map((load, rank) => rankLoad(state, load, rank))
    .filter((load) => dpRank === undefined || load.dp_rank === dpRank);
  return {
    timestamp: new Date(state.readAtMs).toISOString().replace(/Z$/, '000+00:00'),
    version: SIM_SGLANG_VERSION,
    dp_rank_count: loads.length,
    loads,
    aggregate: aggregate(loads),
  };
}

function rankLoad(state: EngineState, load: SimRankLoad, rank: number): SglangRankLoad {
  const usedTokens = load.activeDecodeBlocks * state.blockSize;
  const tokenUsage = load.activeDecodeBlocks / state.kvTotalBlocks;
  return {
    dp_rank: rank,
    num_running_reqs: load.runningRequests,
    num_waiting_reqs: load.waitingRequests,
    num_waiting_uncached_tokens: load.activePrefillTokens,
    num_used_tokens: usedTokens,
    num_total_tokens: usedTokens + load.activePrefillTokens,
    max_total_num_tokens: state.kvTotalBlocks * state.blockSize,
    token_usage: tokenUsage,
    gen_throughput: 0,
    cache_hit_rate: 0,
    utilization: tokenUsage,
    max_running_requests: state.maxNumSeqs,
    queues: { waiting: load.waitingRequests, grammar: 0, paused: 0, retracted: 0 },
    num_total_reqs: load.runningRequests + load.waitingRequests,
  };
}

function aggregate(loads: readonly SglangRankLoad[]): SglangLoads['aggregate'] {
  const sum = (value: (load: SglangRankLoad) => number): number =>
    loads.reduce((total, load) => total + value(load), 0);
  const mean = (value: (load: SglangRankLoad) => number, digits: number): number =>
    loads.length === 0 ? 0 : round(sum(value) / loads.length, digits);
  return {
    total_running_reqs: sum((load) => load.num_running_reqs),
    total_waiting_reqs: sum((load) => load.num_waiting_reqs),
    total_reqs: sum((load) => load.num_total_reqs),
    avg_token_usage: mean((load) => load.token_usage, 4),
    avg_throughput: mean((load) => load.gen_throughput, 2),
    avg_utilization: mean((load) => load.utilization, 4),
  };
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/**
 * SGLang's `GET /server_info`: its server arguments, the scheduler's capacity and one internal
 * state per rank. `max_total_num_tokens` is per rank, as each SGLang scheduler reports it.
 */
export function sglangServerInfo(state: EngineState): Record<string, unknown> {
  const maxTotalNumTokens = state.kvTotalBlocks * state.blockSize;
  return {
    model_path: state.model,
    tokenizer_path: state.model,
    served_model_name: state.model,
    tp_size: 1,
    dp_size: state.ranks.length,
    pp_size: 1,
    page_size: state.blockSize,
    max_running_requests: state.maxNumSeqs,
    max_total_tokens: null,
    chunked_prefill_size: state.maxNumBatchedTokens,
    max_prefill_tokens: state.maxNumBatchedTokens,
    schedule_policy: 'fcfs',
    disable_radix_cache: true,
    enable_dp_attention: false,
    max_total_num_tokens: maxTotalNumTokens,
    max_req_input_len: maxTotalNumTokens - 1,
    internal_states: state.ranks.map(() => ({ last_gen_throughput: 0 })),
    version: SIM_SGLANG_VERSION,
  };
}
