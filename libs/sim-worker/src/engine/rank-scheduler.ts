import { Sequence } from './sequence';

export interface RankLimits {
  readonly kvTotalBlocks: number;
  readonly blockSize: number;
  readonly maxNumBatchedTokens: number;
  readonly maxNumSeqs: number;
}

/** The numbers a rank reports (docs/api.md#nats-subjects) and serves in an engine's metrics format. */
export interface SimRankLoad {
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
  /**
   * FIFO of sequences, from `waitingHead` on; a cancelled one stays in place and is skipped.
   * Arrays rather than Sets: a Set that sequences keep entering and leaving is rebuilt every few
   * entries, and V8 leaves each replaced table linked to its successor, still holding the
   * sequences it had. Once one replaced table was promoted to the old generation, it kept the
   * next alive through a young collection, and so on: every later table, and the requests behind
   * its sequences, was promoted too, and the worker's latency suffered from frequent full
   * collections.
   */
  private waiting: Array<Sequence | undefined> = [];
  private waitingHead = 0;
  private waitingSize = 0;
  /** Admission order; a sequence that left stays until the next step plan drops it. */
  private readonly running: Sequence[] = [];
  private runningSize = 0;
  private reservedBlocks = 0;
  private heldBlocks = 0;
  private pendingPrefill = 0;
  private queuedTokens = 0;
  private promptTokensTotal = 0;
  private generationTokensTotal = 0;

  constructor(readonly limits: RankLimits) {}

  get isIdle(): boolean {
    return this.waitingSize === 0 && this.runningSize === 0;
  }

  get runningCount(): number {
    return this.runningSize;
  }

  get waitingCount(): number {
    return this.waitingSize;
  }

  load(): SimRankLoad {
    return {
      activeDecodeBlocks: this.heldBlocks,
      activePrefillTokens: this.pendingPrefill,
      runningRequests: this.runningSize,
      waitingRequests: this.waitingSize,
      promptTokensTotal: this.promptTokensTotal,
      generationTokensTotal: this.generationTokensTotal,
    };
  }

  /** Lower is emptier: blocks reserved by running sequences plus prompt tokens still queued. */
  assignmentScore(): number {
    return this.reservedBlocks + this.queuedTokens;
  }

  enqueue(seq: Sequence): void {
    this.waiting.push(seq);
    this.waitingSize += 1;
    this.pendingPrefill += seq.promptTokens;
    this.queuedTokens += seq.promptTokens;
  }

  /** Removes a waiting or running sequence and frees its blocks; false if it had already left. */
  cancel(seq: Sequence): boolean {
    if (seq.state === 'waiting') {
      this.waitingSize -= 1;
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
    const all = [...this.running, ...this.waiting].filter(
      (seq): seq is Sequence => seq?.state === 'running' || seq?.state === 'waiting',
    );
    for (const seq of all) this.cancel(seq);
    return all;
  }

  /** Admits what fits and picks this step's prefill chunks and decoders; null when idle. */
  planStep(): StepPlan | null {
    const chunks: Array<{ seq: Sequence; tokens: number }> = [];
    const decoding: Sequence[] = [];
    let budget = this.limits.maxNumBatchedTokens;
    // Running sequences first (vLLM order), so a partly prefilled prompt keeps its progress;
    // those that left since the last plan are dropped on the way.
    let kept = 0;
    for (const seq of this.running) {
      if (seq.state !== 'running') continue;
      this.running[kept++] = seq;
      if (seq.remainingPrefill === 0) decoding.push(seq);
      else if (budget > 0) budget -= this.addChunk(chunks, seq, budget);
    }
    this.running.length = kept;
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
    const seq = this.waitingFront();
    if (!seq) return null;
    const { blockSize, kvTotalBlocks, maxNumSeqs } = this.limits;
    const needed = seq.worstCaseBlocks(blockSize);
    if (this.runningSize >= maxNumSeqs || this.reservedBlocks + needed > kvTotalBlocks) {
      return null;
    }
    this.waiting[this.waitingHead++] = undefined;
    this.waitingSize -= 1;
    this.queuedTokens -= seq.promptTokens;
    this.running.push(seq);
    this.runningSize += 1;
    seq.state = 'running';
    this.reservedBlocks += needed;
    this.heldBlocks += seq.heldBlocks(blockSize);
    return seq;
  }

  /**
   * The oldest sequence still waiting, past cancelled ones. Slots behind the head are cleared, so
   * an admitted or skipped sequence is not held by the queue (a cancelled one ahead of the head
   * is, until the head reaches it); the array is cut down when empty or mostly behind its head.
   */
  private waitingFront(): Sequence | null {
    let seq: Sequence | undefined;
    while (this.waitingHead < this.waiting.length) {
      seq = this.waiting[this.waitingHead];
      if (seq?.state === 'waiting') break;
      this.waiting[this.waitingHead++] = undefined;
    }
    if (this.waitingHead === this.waiting.length) {
      this.waiting.length = 0;
      this.waitingHead = 0;
      return null;
    }
    if (this.waitingHead >= 1024 && this.waitingHead * 2 >= this.waiting.length) {
      this.waiting = this.waiting.slice(this.waitingHead);
      this.waitingHead = 0;
    }
    return seq ?? null;
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
    this.runningSize -= 1;
    this.reservedBlocks -= seq.worstCaseBlocks(this.limits.blockSize);
    this.heldBlocks -= seq.heldBlocks(this.limits.blockSize);
    seq.state = state;
  }
}
