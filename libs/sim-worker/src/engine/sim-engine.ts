import { EngineClosedError, SequenceTooLargeError } from './engine.errors';
import { RankLoop } from './rank-loop';
import { RankLimits, SimRankLoad, RankScheduler, StepPlan } from './rank-scheduler';
import { Sequence, SequenceRequest, SequenceSink } from './sequence';

export interface EngineConfig extends RankLimits {
  readonly dpSize: number;
  readonly speedup: number;
}

export interface SubmittedSequence {
  readonly rank: number;
  /** Removes the sequence and frees its blocks at once; a no-op once it has finished. */
  cancel(): void;
}

export type RankChangeListener = (rank: number) => void;
export type StepListener = (rank: number, plan: StepPlan) => void;

/**
 * A simulated inference engine: `dpSize` independent ranks, each batching continuously.
 * Listeners hear about a rank whenever its reported load changes.
 */
export class SimEngine {
  private readonly loops: RankLoop[];
  private readonly lastLoads: SimRankLoad[];
  private readonly listeners = new Set<RankChangeListener>();
  private readonly stepListeners = new Set<StepListener>();
  private closed = false;
  private currentSpeedup: number;

  constructor(readonly config: EngineConfig) {
    this.currentSpeedup = config.speedup;
    this.loops = Array.from(
      { length: config.dpSize },
      (_, rank) =>
        new RankLoop(
          new RankScheduler(config),
          config.speedup,
          () => this.notify(rank),
          (plan) => this.stepListeners.forEach((listener) => listener(rank, plan)),
        ),
    );
    this.lastLoads = this.loops.map((loop) => loop.scheduler.load());
  }

  get dpSize(): number {
    return this.loops.length;
  }

  /** The divisor of every simulated delay now (`--speedup` at start). */
  get speedup(): number {
    return this.currentSpeedup;
  }

  /**
   * Changes the engine's speed while it runs, from each rank's next step on: a simulated GPU
   * that turns slower or faster (a noisy neighbour), for tests of what the frontend learns.
   */
  setSpeedup(speedup: number): void {
    if (!Number.isFinite(speedup) || speedup < 0) {
      throw new RangeError(`speedup must be a finite number >= 0, got ${speedup}`);
    }
    this.currentSpeedup = speedup;
    for (const loop of this.loops) loop.setSpeedup(speedup);
  }

  load(rank: number): SimRankLoad {
    return this.loops[rank].scheduler.load();
  }

  onChange(listener: RankChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Hears every step a rank completes, with what it did. */
  onStep(listener: StepListener): () => void {
    this.stepListeners.add(listener);
    return () => this.stepListeners.delete(listener);
  }

  /** Whether the rank has nothing running and nothing waiting. */
  isIdle(rank: number): boolean {
    return this.loops[rank].scheduler.isIdle;
  }

  /** Throws what `submit` would throw, so a caller can fail before it commits to a response. */
  assertAccepts(request: SequenceRequest): void {
    if (this.closed) throw new EngineClosedError();
    const { promptTokens, maxTokens } = request;
    if (!Number.isSafeInteger(promptTokens) || promptTokens < 1) {
      throw new RangeError(`promptTokens must be an integer >= 1, got ${promptTokens}`);
    }
    if (!Number.isSafeInteger(maxTokens) || maxTokens < 0) {
      throw new RangeError(`maxTokens must be an integer >= 0, got ${maxTokens}`);
    }
    const needed = Math.ceil((promptTokens + maxTokens) / this.config.blockSize);
    if (needed > this.config.kvTotalBlocks) {
      throw new SequenceTooLargeError(needed, this.config.kvTotalBlocks);
    }
  }

  submit(request: SequenceRequest, sink: SequenceSink): SubmittedSequence {
    this.assertAccepts(request);
    const rank = this.pickRank();
    const loop = this.loops[rank];
    const seq = new Sequence(request.promptTokens, request.maxTokens, sink);
    loop.scheduler.enqueue(seq);
    this.notify(rank);
    loop.wake();
    const cancel = (): void => {
      if (loop.scheduler.cancel(seq)) this.notify(rank);
    };
    return { rank, cancel };
  }

  /** Stops every rank and aborts what is still waiting or running. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const error = new EngineClosedError();
    this.loops.forEach((loop, rank) => {
      loop.close();
      for (const seq of loop.scheduler.drain()) seq.sink.onAbort(error);
      this.notify(rank);
    });
    this.listeners.clear();
    this.stepListeners.clear();
  }

  /** The rank with the fewest reserved blocks plus queued tokens; ties go to the lowest rank. */
  private pickRank(): number {
    let best = 0;
    let bestScore = Infinity;
    this.loops.forEach((loop, rank) => {
      const score = loop.scheduler.assignmentScore();
      if (score < bestScore) {
        best = rank;
        bestScore = score;
      }
    });
    return best;
  }

  private notify(rank: number): void {
    const load = this.loops[rank].scheduler.load();
    const last = this.lastLoads[rank];
    // The token counters move on every step; only the reported gauges make a change.
    if (
      load.activeDecodeBlocks === last.activeDecodeBlocks &&
      load.activePrefillTokens === last.activePrefillTokens &&
      load.runningRequests === last.runningRequests &&
      load.waitingRequests === last.waitingRequests
    ) {
      return;
    }
    this.lastLoads[rank] = load;
    for (const listener of this.listeners) listener(rank);
  }
}
