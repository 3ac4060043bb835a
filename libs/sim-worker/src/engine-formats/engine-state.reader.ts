import { Injectable } from '@nestjs/common';
import { WorkerConfig } from '../config/worker-config';
import { SimRankLoad } from '../engine/rank-scheduler';
import { SimEngine } from '../engine/sim-engine';

/** The live engine state every metrics format is rendered from; plain data, so formats are pure. */
export interface EngineState {
  readonly model: string;
  readonly blockSize: number;
  /** KV cache size of each rank, in blocks. */
  readonly kvTotalBlocks: number;
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  /** When the worker's engine started, in ms since the epoch. */
  readonly startedAtMs: number;
  /** When this state was read, in ms since the epoch. */
  readonly readAtMs: number;
  /** Index = data-parallel rank. */
  readonly ranks: readonly SimRankLoad[];
}

/** Reads the engine's current numbers: the same ones its NATS reports carry. */
@Injectable()
export class EngineStateReader {
  private readonly startedAtMs = Date.now();

  constructor(
    private readonly engine: SimEngine,
    private readonly config: WorkerConfig,
  ) {}

  read(): EngineState {
    const { model, blockSize, kvTotalBlocks, maxNumSeqs, maxNumBatchedTokens } =
      this.config.options;
    const ranks = Array.from({ length: this.engine.dpSize }, (_, rank) => this.engine.load(rank));
    return {
      model,
      blockSize,
      kvTotalBlocks,
      maxNumSeqs,
      maxNumBatchedTokens,
      startedAtMs: this.startedAtMs,
      readAtMs: Date.now(),
      ranks,
    };
  }
}
