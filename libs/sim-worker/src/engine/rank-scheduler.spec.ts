import { RankLimits, RankScheduler } from './rank-scheduler';
import { Sequence, SequenceSink } from './sequence';

interface Recorded extends SequenceSink {
  tokens: number[];
  finished: boolean;
}

function recorder(): Recorded {
  const sink: Recorded = {
    tokens: [],
    finished: false,
    onToken: (index) => sink.tokens.push(index),
    onFinish: () => (sink.finished = true),
    onAbort: () => undefined,
  };
  return sink;
}

const limits = (overrides: Partial<RankLimits> = {}): RankLimits => ({
  kvTotalBlocks: 1000,
  blockSize: 16,
  maxNumBatchedTokens: 8192,
  maxNumSeqs: 256,
  ...overrides,
});

function seq(promptTokens: number, maxTokens: number): Sequence & { sink: Recorded } {
  return new Sequence(promptTokens, maxTokens, recorder()) as Sequence & { sink: Recorded };
}

/** Plans and applies one step; returns the plan so tests can inspect it. */
function step(sut: RankScheduler) {
  const plan = sut.planStep();
  if (plan) sut.completeStep(plan);
  return plan;
}

describe('RankScheduler', () => {
  it('holds ceil((prompt + generated) / block_size) blocks per running sequence', () => {
    const sut = new RankScheduler(limits());
    const a = seq(16, 3);
    sut.enqueue(a);
    expect(sut.load().activeDecodeBlocks).toBe(0);

    sut.planStep(); // admitted: the whole prompt is held, 16 tokens = 1 block
    expect(sut.load().activeDecodeBlocks).toBe(1);
    sut.completeStep({
      chunks: [{ seq: a, tokens: 16 }],
      decoding: [],
      prefillTokens: 16,
      utilisation: 0,
    });
    expect(a.sink.tokens).toEqual([0]); // 17 tokens now
    expect(sut.load().activeDecodeBlocks).toBe(2);

    step(sut);
    expect(sut.load().activeDecodeBlocks).toBe(2); // 18 tokens
    step(sut);
    expect(a.sink.tokens).toEqual([0, 1, 2]);
    expect(a.sink.finished).toBe(true);
    expect(sut.load().activeDecodeBlocks).toBe(0);
    expect(sut.isIdle).toBe(true);
  });

  it('sums blocks over running sequences and reports utilisation to the decode step', () => {
    const sut = new RankScheduler(limits({ kvTotalBlocks: 100 }));
    sut.enqueue(seq(100, 10)); // 7 blocks
    sut.enqueue(seq(33, 10)); // 3 blocks
    step(sut); // both prefilled, one token each: 101 -> 7 blocks, 34 -> 3 blocks
    expect(sut.load().activeDecodeBlocks).toBe(10);
    const plan = sut.planStep();
    expect(plan?.decoding).toHaveLength(2);
    expect(plan?.utilisation).toBeCloseTo(0.1, 9);
  });

  it('keeps a request waiting while its worst case does not fit in unreserved blocks', () => {
    const sut = new RankScheduler(limits({ kvTotalBlocks: 10 }));
    const a = seq(64, 64); // worst case 8 blocks
    const b = seq(32, 16); // worst case 3 blocks: 8 + 3 > 10
    sut.enqueue(a);
    sut.enqueue(b);
    step(sut);
    expect(sut.runningCount).toBe(1);
    expect(sut.waitingCount).toBe(1);
    expect(sut.load()).toEqual({
      activeDecodeBlocks: 5,
      activePrefillTokens: 32,
      runningRequests: 1,
      waitingRequests: 1,
      promptTokensTotal: 64,
      generationTokensTotal: 1,
    });

    while (!a.sink.finished) step(sut);
    expect(sut.load().activeDecodeBlocks).toBeLessThanOrEqual(10);
    step(sut);
    expect(sut.runningCount).toBe(1);
    expect(b.sink.tokens).toEqual([0]);
  });

  it('admits in FIFO order: a small request does not overtake one that does not fit', () => {
    const sut = new RankScheduler(limits({ kvTotalBlocks: 10 }));
    sut.enqueue(seq(64, 64));
    sut.enqueue(seq(64, 64));
    const small = seq(1, 1);
    sut.enqueue(small);
    step(sut);
    expect(sut.runningCount).toBe(1);
    expect(small.sink.tokens).toEqual([]);
  });

  it('runs at most max_num_seqs sequences at once', () => {
    const sut = new RankScheduler(limits({ maxNumSeqs: 2 }));
    const all = [seq(10, 5), seq(10, 5), seq(10, 5)];
    all.forEach((s) => sut.enqueue(s));
    step(sut);
    expect(sut.runningCount).toBe(2);
    expect(sut.waitingCount).toBe(1);
    expect(all[2].sink.tokens).toEqual([]);
  });

  it('prefills at most max_num_batched_tokens prompt tokens per step (chunked prefill)', () => {
    const sut = new RankScheduler(limits({ maxNumBatchedTokens: 100 }));
    const long = seq(250, 2);
    sut.enqueue(long);
    expect(sut.load().activePrefillTokens).toBe(250);

    expect(step(sut)?.prefillTokens).toBe(100);
    expect(sut.load().activePrefillTokens).toBe(150);
    expect(step(sut)?.prefillTokens).toBe(100);
    expect(long.sink.tokens).toEqual([]);
    expect(step(sut)?.prefillTokens).toBe(50);
    expect(long.sink.tokens).toEqual([0]); // first token in the step that completes the prefill
    expect(sut.load().activePrefillTokens).toBe(0);
  });

  it('shares the prompt budget of a step between sequences, oldest first', () => {
    const sut = new RankScheduler(limits({ maxNumBatchedTokens: 100 }));
    const a = seq(80, 2);
    const b = seq(80, 2);
    sut.enqueue(a);
    sut.enqueue(b);
    const plan = step(sut);
    expect(plan?.chunks.map((c) => c.tokens)).toEqual([80, 20]);
    expect(sut.load().activePrefillTokens).toBe(60);
  });

  it('does not admit beyond the prompt budget of the step', () => {
    const sut = new RankScheduler(limits({ maxNumBatchedTokens: 100 }));
    sut.enqueue(seq(100, 2));
    sut.enqueue(seq(10, 2));
    step(sut);
    expect(sut.waitingCount).toBe(1);
  });

  it('frees the blocks of a cancelled running sequence at once', () => {
    const sut = new RankScheduler(limits({ maxNumBatchedTokens: 100 }));
    const a = seq(250, 50);
    sut.enqueue(a);
    const plan = sut.planStep();
    expect(sut.load()).toMatchObject({ activeDecodeBlocks: 16, activePrefillTokens: 250 });
    expect(sut.load()).toMatchObject({ runningRequests: 1, waitingRequests: 0 });

    expect(sut.cancel(a)).toBe(true);
    const empty = {
      activeDecodeBlocks: 0,
      activePrefillTokens: 0,
      runningRequests: 0,
      waitingRequests: 0,
      promptTokensTotal: 0,
      generationTokensTotal: 0,
    };
    expect(sut.load()).toEqual(empty);
    if (plan) sut.completeStep(plan);
    expect(a.sink.tokens).toEqual([]);
    expect(sut.load()).toEqual(empty); // the step of a cancelled sequence counts nothing
    expect(sut.cancel(a)).toBe(false);
  });

  it('removes a cancelled waiting sequence from the queue and its prompt from the load', () => {
    const sut = new RankScheduler(limits({ kvTotalBlocks: 10 }));
    sut.enqueue(seq(64, 64));
    const queued = seq(64, 64);
    sut.enqueue(queued);
    step(sut);
    expect(sut.load().activePrefillTokens).toBe(64);
    sut.cancel(queued);
    expect(sut.load().activePrefillTokens).toBe(0);
    expect(sut.waitingCount).toBe(0);
  });

  it('skips a sequence cancelled mid-queue and admits the one behind it in its turn', () => {
    const sut = new RankScheduler(limits({ kvTotalBlocks: 8, maxNumBatchedTokens: 8192 }));
    const first = seq(64, 64); // 8 blocks: the whole cache
    const cancelled = seq(64, 64);
    const last = seq(64, 64);
    for (const s of [first, cancelled, last]) sut.enqueue(s);
    step(sut);
    sut.cancel(cancelled);
    expect(sut.waitingCount).toBe(1);
    expect(sut.cancel(first)).toBe(true); // frees the cache
    const plan = sut.planStep();
    expect(plan?.chunks.map((c) => c.seq)).toEqual([last]);
    expect(sut.load()).toMatchObject({ runningRequests: 1, waitingRequests: 0 });
  });

  it('keeps FIFO order and its counts through a queue thousands of sequences long', () => {
    const sut = new RankScheduler(limits({ kvTotalBlocks: 1_000_000, maxNumSeqs: 100 }));
    const all = Array.from({ length: 5000 }, () => seq(16, 1));
    all.forEach((s) => sut.enqueue(s));
    all.filter((_, i) => i % 7 === 3).forEach((s) => sut.cancel(s));
    const admitted: Sequence[] = [];
    for (let plan = sut.planStep(); plan; plan = sut.planStep()) {
      admitted.push(...plan.chunks.map((c) => c.seq));
      sut.completeStep(plan);
      expect(sut.runningCount + sut.waitingCount).toBe(
        all.filter((s) => s.state === 'running' || s.state === 'waiting').length,
      );
    }
    expect(admitted).toEqual(all.filter((_, i) => i % 7 !== 3));
    expect(all.filter((_, i) => i % 7 !== 3).every((s) => s.sink.finished)).toBe(true);
    expect(sut.isIdle).toBe(true);
  });

  it('drains exactly the sequences still running or waiting', () => {
    const sut = new RankScheduler(limits({ kvTotalBlocks: 8 }));
    const running = seq(64, 64);
    const done = seq(1, 0);
    const waiting = seq(64, 64);
    const cancelled = seq(64, 64);
    sut.enqueue(done);
    step(sut);
    for (const s of [running, waiting, cancelled]) sut.enqueue(s);
    step(sut);
    sut.cancel(cancelled);
    expect(sut.drain()).toEqual([running, waiting]);
    expect(sut.isIdle).toBe(true);
    expect(sut.load()).toMatchObject({ activeDecodeBlocks: 0, activePrefillTokens: 0 });
  });

  it('finishes a prefill-only sequence (embeddings) without emitting tokens', () => {
    const sut = new RankScheduler(limits());
    const embed = seq(40, 0);
    sut.enqueue(embed);
    const plan = step(sut);
    expect(plan?.decoding).toEqual([]);
    expect(embed.sink.finished).toBe(true);
    expect(embed.sink.tokens).toEqual([]);
    expect(sut.load().activeDecodeBlocks).toBe(0);
  });

  it('counts prompt tokens as their chunks are prefilled and every generated token', () => {
    const sut = new RankScheduler(limits({ maxNumBatchedTokens: 100 }));
    sut.enqueue(seq(150, 3));
    step(sut);
    expect(sut.load()).toMatchObject({ promptTokensTotal: 100, generationTokensTotal: 0 });
    step(sut);
    expect(sut.load()).toMatchObject({ promptTokensTotal: 150, generationTokensTotal: 1 });
    step(sut);
    step(sut);
    expect(sut.load()).toMatchObject({ promptTokensTotal: 150, generationTokensTotal: 3 });
    expect(sut.load()).toMatchObject({ runningRequests: 0, waitingRequests: 0 });
  });

  it('prefers the rank with the smaller reserved blocks plus queued tokens', () => {
    const sut = new RankScheduler(limits({ kvTotalBlocks: 10 }));
    sut.enqueue(seq(64, 64));
    sut.enqueue(seq(40, 0));
    expect(sut.assignmentScore()).toBe(104); // nothing reserved, 104 tokens queued
    step(sut);
    expect(sut.assignmentScore()).toBe(8 + 40); // 8 blocks reserved, 40 tokens still queued
  });
});
