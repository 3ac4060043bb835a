import { EngineClosedError, SequenceTooLargeError } from './engine.errors';
import { SequenceSink } from './sequence';
import { EngineConfig, SimEngine } from './sim-engine';
import { decodeStepMs, prefillStepMs } from './step-timing';

const config = (overrides: Partial<EngineConfig> = {}): EngineConfig => ({
  kvTotalBlocks: 100,
  blockSize: 16,
  maxNumBatchedTokens: 8192,
  maxNumSeqs: 256,
  dpSize: 1,
  speedup: 1,
  ...overrides,
});

interface Timed extends SequenceSink {
  at: number[];
  finished: boolean;
  aborted: Error | null;
}

function timedSink(): Timed {
  const sink: Timed = {
    at: [],
    finished: false,
    aborted: null,
    onToken: () => sink.at.push(Date.now()),
    onFinish: () => (sink.finished = true),
    onAbort: (error) => (sink.aborted = error),
  };
  return sink;
}

/** Timers fire on whole milliseconds; a step may end up to a millisecond and a half off. */
function expectNear(actualMs: number, expectedMs: number): void {
  expect(Math.abs(actualMs - expectedMs)).toBeLessThanOrEqual(1.5);
}

describe('SimEngine', () => {
  let sut: SimEngine;

  afterEach(() => {
    sut.close();
    jest.useRealTimers();
  });

  describe('with simulated time', () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] }));

    it('emits the first token after the prefill time and the next after a decode step', () => {
      sut = new SimEngine(config());
      const start = Date.now();
      const sink = timedSink();
      sut.submit({ promptTokens: 1000, maxTokens: 2 }, sink);

      jest.advanceTimersByTime(Math.floor(prefillStepMs(1000)) - 1);
      expect(sink.at).toEqual([]);
      jest.advanceTimersByTime(2);
      expect(sink.at).toHaveLength(1);
      expectNear(sink.at[0] - start, prefillStepMs(1000));

      // 1001 tokens now hold 63 of the rank's 100 blocks.
      jest.advanceTimersByTime(100);
      expectNear(sink.at[1] - start, prefillStepMs(1000) + decodeStepMs(0.63));
      expect(sink.finished).toBe(true);
    });

    it('divides every delay by the speedup', () => {
      sut = new SimEngine(config({ speedup: 4 }));
      const start = Date.now();
      const sink = timedSink();
      sut.submit({ promptTokens: 1000, maxTokens: 2 }, sink);
      jest.advanceTimersByTime(100);
      expectNear(sink.at[0] - start, prefillStepMs(1000) / 4);
      expectNear(sink.at[1] - sink.at[0], decodeStepMs(0.63) / 4);
    });

    it('changes speed while running, from the next step on', () => {
      sut = new SimEngine(config({ speedup: 4 }));
      const start = Date.now();
      const sink = timedSink();
      sut.submit({ promptTokens: 1000, maxTokens: 3 }, sink);
      jest.advanceTimersByTime(1);
      sut.setSpeedup(0.5); // the prefill step under way keeps its duration
      expect(sut.speedup).toBe(0.5);
      jest.advanceTimersByTime(1000);
      expectNear(sink.at[0] - start, prefillStepMs(1000) / 4);
      expectNear(sink.at[1] - sink.at[0], decodeStepMs(0.63) / 0.5);
      expectNear(sink.at[2] - sink.at[1], decodeStepMs(0.63) / 0.5);
      expect(() => sut.setSpeedup(-1)).toThrow(RangeError);
      expect(() => sut.setSpeedup(Number.NaN)).toThrow(RangeError);
    });

    it('frees the blocks of a cancelled sequence at once and tells listeners', () => {
      sut = new SimEngine(config());
      const changes: number[] = [];
      sut.onChange((rank) => changes.push(rank));
      const sink = timedSink();
      const handle = sut.submit({ promptTokens: 320, maxTokens: 1000 }, sink);
      jest.advanceTimersByTime(100);
      expect(sut.load(0).activeDecodeBlocks).toBeGreaterThanOrEqual(20);

      changes.length = 0;
      handle.cancel();
      expect(sut.load(0)).toMatchObject({
        activeDecodeBlocks: 0,
        activePrefillTokens: 0,
        runningRequests: 0,
        waitingRequests: 0,
      });
      expect(changes).toEqual([0]);
      const emitted = sink.at.length;
      jest.advanceTimersByTime(1000);
      expect(sink.at).toHaveLength(emitted);
      expect(jest.getTimerCount()).toBe(0);
    });

    it('aborts what is in flight on close and leaves no timer behind', () => {
      sut = new SimEngine(config({ dpSize: 2 }));
      const sinks = [timedSink(), timedSink(), timedSink()];
      sinks.forEach((sink) => sut.submit({ promptTokens: 100, maxTokens: 100 }, sink));
      jest.advanceTimersByTime(50);

      sut.close();
      sinks.forEach((sink) => expect(sink.aborted).toBeInstanceOf(EngineClosedError));
      expect(jest.getTimerCount()).toBe(0);
      expect(() => sut.submit({ promptTokens: 1, maxTokens: 1 }, timedSink())).toThrow(
        EngineClosedError,
      );
    });
  });

  it('assigns each request to the rank with the fewest reserved blocks plus queued tokens', () => {
    sut = new SimEngine(config({ dpSize: 3, speedup: 0 }));
    const ranks = [
      sut.submit({ promptTokens: 400, maxTokens: 100 }, timedSink()).rank,
      sut.submit({ promptTokens: 100, maxTokens: 100 }, timedSink()).rank,
      sut.submit({ promptTokens: 200, maxTokens: 100 }, timedSink()).rank,
      sut.submit({ promptTokens: 10, maxTokens: 100 }, timedSink()).rank,
    ];
    expect(ranks).toEqual([0, 1, 2, 1]);
    expect(sut.load(1).activePrefillTokens).toBe(110);
  });

  it('rejects a request whose worst case exceeds the whole cache', () => {
    sut = new SimEngine(config({ kvTotalBlocks: 10 }));
    expect(() => sut.assertAccepts({ promptTokens: 100, maxTokens: 61 })).toThrow(
      SequenceTooLargeError,
    );
    expect(() => sut.assertAccepts({ promptTokens: 100, maxTokens: 60 })).not.toThrow();
  });

  it('with speedup 0 runs steps back to back without starving the event loop', async () => {
    sut = new SimEngine(config({ kvTotalBlocks: 1000, speedup: 0 }));
    const sink = timedSink();
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 0);
    const done = new Promise<void>((resolve) => {
      sut.submit({ promptTokens: 10, maxTokens: 2000 }, { ...sink, onFinish: resolve });
    });
    await done;
    clearInterval(ticker);
    expect(sink.at).toHaveLength(2000);
    expect(ticks).toBeGreaterThan(0);
  });
});
