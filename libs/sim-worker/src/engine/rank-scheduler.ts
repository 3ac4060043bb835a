import { Sequence } from './sequence';

export interface RankLimits {
  readonly kvTotalBlocks: number;
  readonly blockSize: number;
  readonly maxNumBatchedTokens: number;
  readonly maxNumSeqs: number;
}

/** The numbers a rank reports (contract §4) and serves in an engine's metrics format. */
export interface RankLoad {
  /** KV blocks held by running sequences (their prompt and every token generated so far). */
  readonly activeDecodeBlocks: number;
  /** Prompt tokens queued or admitted that have not been prefilled yet. */
  readonly activePrefillTokens: number;
  readonly runningRequests: number;
  /** Requests queued in the engine because they do not fit yet. */
  readonly waitingRequests: number;
  /** Counters since the rank started: prompt tokens prefilled, output tokens generated. */
  readonly promptTokensTotal: number;
  readonly generationTokensTotal: number;
}

/** What one step does; planned at its start, applied when its simulated duration has passed. */
export interface StepPlan {
  readonly chunks: ReadonlyArray<{ readonly seq: Sequence; readonly tokens: number }>;
  readonly decoding: readonly Sequence[];
  readonly prefillTokens: number;
  /** Active decode blocks / total blocks when the step starts. */
  readonly utilisation: number;
}

/**
 * Continuous batching of one data-parallel rank, as vLLM's scheduler does it: FIFO admission
 * bounded by KV blocks (worst case reserved, so there is never a preemption), by
 * max_num_seqs and by the step's prompt-token budget; chunked prefill; one token per
 * decoding sequence per step. Pure state, no timers: `RankLoop` drives it.
 */
export class RankScheduler {
  private readonly waiting = new Set<Sequence>();
  private readonly running = new Set<Sequence>();
  private reservedBlocks = 0;
  private heldBlocks = 0;
  private pendingPrefill = 0;
  private queuedTokens = 0;
  private promptTokensTotal = 0;
  private generationTokensTotal = 0;

  constructor(readonly limits: RankLimits) {}

  get isIdle(): boolean {
    return this.waiting.size === 0 && this.running.size === 0;
  }

  get runningCount(): number {
    return this.running.size;
  }

  get waitingCount(): number {
    return this.waiting.size;
  }

  load(): RankLoad {
    return {
      activeDecodeBlocks: this.heldBlocks,
      activePrefillTokens: this.pendingPrefill,
      runningRequests: this.running.size,
      waitingRequests: this.waiting.size,
      promptTokensTotal: this.promptTokensTotal,
      generationTokensTotal: this.generationTokensTotal,
    };
  }

  /** Lower is emptier: blocks reserved by running sequences plus prompt tokens still queued. */
  assignmentScore(): number {
    return this.reservedBlocks + this.queuedTokens;
  }

  enqueue(seq: Sequence): void {
    this.waiting.add(seq);
    this.pendingPrefill += seq.promptTokens;
    this.queuedTokens += seq.promptTokens;
  }

  /** Removes a waiting or running sequence and frees its blocks; false if it had already left. */
  cancel(seq: Sequence): boolean {
    if (this.waiting.delete(seq)) {
      this.pendingPrefill -= seq.promptTokens;
      this.queuedTokens -= seq.promptTokens;
    } else if (seq.state === 'running') {
      this.pendingPrefill -= seq.remainingPrefill;
      this.release(seq);
    } else {
      return false;
    }
    seq.state = 'cancelled';
    return true;
  }

  /** Empties the rank (shutdown) and returns every sequence that was still in it. */
  drain(): Sequence[] {
    const all = [...this.running, ...this.waiting];
    for (const seq of all) this.cancel(seq);
    return all;
  }

  /** Admits what fits and picks this step's prefill chunks and decoders; null when idle. */
  planStep(): StepPlan | null {
    const chunks: Array<{ seq: Sequence; tokens: number }> = [];
    const decoding: Sequence[] = [];
    let budget = this.limits.maxNumBatchedTokens;
    // Running sequences first (vLLM order), so a partly prefilled prompt keeps its progress.
    for (const seq of this.running) {
      if (seq.remainingPrefill === 0) decoding.push(seq);
      else if (budget > 0) budget -= this.addChunk(chunks, seq, budget);
    }
    while (budget > 0) {
      const seq = this.admitNext();
      if (!seq) break;
      budget -= this.addChunk(chunks, seq, budget);
    }
    if (chunks.length === 0 && decoding.length === 0) return null;
    const prefillTokens = this.limits.maxNumBatchedTokens - budget;
    const utilisation = this.heldBlocks / this.limits.kvTotalBlocks;
    return { chunks, decoding, prefillTokens, utilisation };
  }

  /** Applies a finished step: prefill progress, first tokens, one token per decoder. */
  completeStep(plan: StepPlan): void {
    for (const { seq, tokens } of plan.chunks) {
      if (seq.state !== 'running') continue;
      seq.prefilled += tokens;
      this.pendingPrefill -= tokens;
      this.promptTokensTotal += tokens;
      if (seq.remainingPrefill > 0) continue;
      if (seq.maxTokens > 0) this.emitToken(seq);
      else this.finish(seq);
    }
    for (const seq of plan.decoding) {
      if (seq.state === 'running') this.emitToken(seq);
    }
  }

  private addChunk(
    chunks: Array<{ seq: Sequence; tokens: number }>,
    seq: Sequence,
    budget: number,
  ): number {
    const tokens = Math.min(seq.remainingPrefill, budget);
    chunks.push({ seq, tokens });
    return tokens;
  }

  /** FIFO: when the head of the queue does not fit, nothing behind it is admitted either. */
  private admitNext(): Sequence | null {
    const head = this.waiting.values().next();
    if (head.done) return null;
    const seq = head.value;
    const { blockSize, kvTotalBlocks, maxNumSeqs } = this.limits;
    const needed = seq.worstCaseBlocks(blockSize);
    if (this.running.size >= maxNumSeqs || this.reservedBlocks + needed > kvTotalBlocks) {
      return null;
    }
    this.waiting.delete(seq);
    this.queuedTokens -= seq.promptTokens;
    this.running.add(seq);
    seq.state = 'running';
    this.reservedBlocks += needed;
    this.heldBlocks += seq.heldBlocks(blockSize);
    return seq;
  }

  private emitToken(seq: Sequence): void {
    const { blockSize } = this.limits;
    const before = seq.heldBlocks(blockSize);
    seq.generated += 1;
    this.generationTokensTotal += 1;
    this.heldBlocks += seq.heldBlocks(blockSize) - before;
    const done = seq.generated >= seq.maxTokens;
    // State is settled before the sink runs, so a sink that cancels sees a consistent rank.
    if (done) this.release(seq, 'finished');
    seq.sink.onToken(seq.generated - 1);
    if (done) seq.sink.onFinish();
  }

  private finish(seq: Sequence): void {
    this.release(seq, 'finished');
    seq.sink.onFinish();
  }

  private release(seq: Sequence, state: 'finished' | 'cancelled' = 'cancelled'): void {
    this.running.delete(seq);
    this.reservedBlocks -= seq.worstCaseBlocks(this.limits.blockSize);
    this.heldBlocks -= seq.heldBlocks(this.limits.blockSize);
    seq.state = state;
  }
}
