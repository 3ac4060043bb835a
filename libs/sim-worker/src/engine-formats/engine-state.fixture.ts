import { SimRankLoad } from '../engine/rank-scheduler';
import { EngineState } from './engine-state.reader';

/** Test data shared by the engine-format specs (excluded from the build). */
export const IDLE_RANK: SimRankLoad = {
  activeDecodeBlocks: 0,
  activePrefillTokens: 0,
  runningRequests: 0,
  waitingRequests: 0,
  promptTokensTotal: 0,
  generationTokensTotal: 0,
};

/** 870 of 1000 blocks in use, 3 requests running and 2 queued. */
export const BUSY_RANK: SimRankLoad = {
  ...IDLE_RANK,
  activeDecodeBlocks: 870,
  runningRequests: 3,
  waitingRequests: 2,
};

/** An engine of 1000 blocks of 16 tokens per rank with the given ranks, read at a fixed time. */
export function engineState(ranks: SimRankLoad[]): EngineState {
  return {
    model: 'Qwen/Qwen3-0.6B',
    blockSize: 16,
    kvTotalBlocks: 1000,
    maxNumSeqs: 256,
    maxNumBatchedTokens: 8192,
    startedAtMs: 1764470000000,
    readAtMs: 1764470012345,
    ranks,
  };
}
