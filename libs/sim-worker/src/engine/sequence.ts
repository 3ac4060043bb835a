/** What a caller asks of the engine: `maxTokens` 0 means prefill only (embeddings). */
export interface SequenceRequest {
  readonly promptTokens: number;
  readonly maxTokens: number;
}

/** Receives a sequence's output; called from the engine's step loop, so it must not throw. */
export interface SequenceSink {
  /** Token `index` (0-based) of the output was generated. */
  onToken(index: number): void;
  /** Every requested token was generated (or, for prefill only, the prompt was processed). */
  onFinish(): void;
  /** The engine shut down before the sequence finished. */
  onAbort(error: Error): void;
}

export type SequenceState = 'waiting' | 'running' | 'finished' | 'cancelled';

export class Sequence {
  state: SequenceState = 'waiting';
  prefilled = 0;
  generated = 0;

  constructor(
    readonly promptTokens: number,
    readonly maxTokens: number,
    readonly sink: SequenceSink,
  ) {}

  get remainingPrefill(): number {
    return this.promptTokens - this.prefilled;
  }

  /** KV blocks the sequence holds while running: its prompt and every token generated so far. */
  heldBlocks(blockSize: number): number {
    return Math.ceil((this.promptTokens + this.generated) / blockSize);
  }

  /** Blocks it may need at most; reserved at admission so the cache never overflows. */
  worstCaseBlocks(blockSize: number): number {
    return Math.ceil((this.promptTokens + this.maxTokens) / blockSize);
  }
}
