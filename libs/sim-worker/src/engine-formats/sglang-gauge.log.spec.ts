import { SequenceSink } from '../engine/sequence';
import { SimEngine } from '../engine/sim-engine';
import { SGLANG_DECODE_LOG_INTERVAL, SGLANG_IDLE_LOG_MS, SglangGaugeLog } from './sglang-gauge.log';

/** Runs one sequence to its end on an engine without simulated delays. */
function run(engine: SimEngine, promptTokens: number, maxTokens: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const sink: SequenceSink = { onToken: () => undefined, onFinish: resolve, onAbort: reject };
    engine.submit({ promptTokens, maxTokens }, sink);
  });
}

describe('SglangGaugeLog', () => {
  let engine: SimEngine;
  let sut: SglangGaugeLog;

  beforeEach(() => {
    engine = new SimEngine({
      kvTotalBlocks: 1000,
      blockSize: 16,
      maxNumBatchedTokens: 8192,
      maxNumSeqs: 256,
      dpSize: 1,
      speedup: 0,
    });
    sut = new SglangGaugeLog(engine);
  });

  afterEach(() => {
    sut.onModuleDestroy();
    engine.close();
  });

  it('shows the idle engine from the start', () => {
    expect(sut.read()[0]).toMatchObject({ runningRequests: 0, activeDecodeBlocks: 0 });
  });

  it('keeps showing the last written load after a burst until 30 s of idleness have passed', async () => {
    // Fewer decode steps than the log interval: only the prefill step wrote the gauges.
    await run(engine, 320, SGLANG_DECODE_LOG_INTERVAL - 10);
    const endedAt = Date.now();
    expect(engine.load(0)).toMatchObject({ runningRequests: 0, activeDecodeBlocks: 0 });
    expect(sut.read(endedAt)[0]).toMatchObject({ runningRequests: 1, activeDecodeBlocks: 21 });
    expect(sut.read(endedAt + SGLANG_IDLE_LOG_MS - 1_000)[0].runningRequests).toBe(1);
    expect(sut.read(endedAt + SGLANG_IDLE_LOG_MS)[0]).toMatchObject({
      runningRequests: 0,
      activeDecodeBlocks: 0,
    });
  });

  it('writes again at every 40th decode step', async () => {
    await run(engine, 16, SGLANG_DECODE_LOG_INTERVAL * 2 + 5);
    // Last write after decode step 80: 16 prompt tokens and 81 generated ones (the prefill step
    // makes the first) hold 7 blocks of 16; the 5 steps after it changed nothing shown.
    expect(sut.read()[0]).toMatchObject({ runningRequests: 1, activeDecodeBlocks: 7 });
  });
});
