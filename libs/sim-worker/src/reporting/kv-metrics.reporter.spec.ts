import { Logger } from '@nestjs/common';
import { EventPublisher } from '@sluice/bus';
import { KvMetricsWire } from '@sluice/contracts';
import { parseWorkerFlags } from '../config/worker-flags.parser';
import { WorkerConfig } from '../config/worker-config';
import { SimEngine } from '../engine/sim-engine';
import { KvMetricsReporter, REPORT_DEBOUNCE_MS } from './kv-metrics.reporter';

class RecordingPublisher extends EventPublisher {
  readonly sent: Array<{ subject: string; payload: object }> = [];

  publish(subject: string, payload: object): void {
    this.sent.push({ subject, payload });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  reports(): KvMetricsWire[] {
    return this.sent
      .filter((m) => m.subject === 'namespace.test.kv_metrics')
      .map((m) => m.payload as KvMetricsWire);
  }
}

const noop = { onToken: () => undefined, onFinish: () => undefined, onAbort: () => undefined };

describe('KvMetricsReporter', () => {
  let engine: SimEngine;
  let publisher: RecordingPublisher;
  let sut: KvMetricsReporter;

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] });
    const options = parseWorkerFlags([
      ...['--namespace', 'test', '--worker-id', 'w-1', '--dp-size', '2'],
      ...['--kv-total-blocks', '1000', '--report-interval-ms', '1000'],
    ]);
    engine = new SimEngine(options);
    publisher = new RecordingPublisher();
    sut = new KvMetricsReporter(engine, publisher, new WorkerConfig(options));
  });

  afterEach(() => {
    sut.stop();
    engine.close();
    jest.useRealTimers();
  });

  it('reports every rank as soon as it starts, with every field of docs/api.md#nats-subjects', () => {
    sut.start('http://127.0.0.1:9001');
    expect(publisher.reports()).toEqual(
      [0, 1].map((rank) => ({
        worker_id: 'w-1',
        model: 'Qwen/Qwen3-0.6B',
        endpoint: 'http://127.0.0.1:9001',
        dp_rank: rank,
        dp_size: 2,
        active_decode_blocks: 0,
        kv_total_blocks: 1000,
        active_prefill_tokens: 0,
        num_requests_waiting: 0,
        max_num_batched_tokens: 8192,
        timestamp_ms: Date.now(),
        seq: 0,
      })),
    );
  });

  it('reports every rank again each report interval', () => {
    sut.start('http://127.0.0.1:9001');
    jest.advanceTimersByTime(2999);
    expect(publisher.reports()).toHaveLength(2 + 2 * 2);
  });

  it('collapses a burst of changes into one report per changed rank after ~10 ms', () => {
    sut.start('http://127.0.0.1:9001');
    publisher.sent.length = 0;
    for (let i = 0; i < 5; i += 1) engine.submit({ promptTokens: 2000, maxTokens: 10 }, noop);
    engine.submit({ promptTokens: 10, maxTokens: 10 }, noop);

    jest.advanceTimersByTime(REPORT_DEBOUNCE_MS - 1);
    expect(publisher.reports()).toEqual([]);
    jest.advanceTimersByTime(1);
    const reports = publisher.reports();
    expect(reports.map((r) => r.dp_rank).sort()).toEqual([0, 1]);
    const prefill = reports.reduce((sum, r) => sum + (r.active_prefill_tokens ?? 0), 0);
    expect(prefill).toBeGreaterThan(0);
  });

  it('numbers the reports of each rank 0, 1, 2, … whether periodic or after a change', () => {
    sut.start('http://127.0.0.1:9001');
    engine.submit({ promptTokens: 100, maxTokens: 10 }, noop);
    jest.advanceTimersByTime(2500);
    for (const rank of [0, 1]) {
      const seqs = publisher
        .reports()
        .filter((r) => r.dp_rank === rank)
        .map((r) => r.seq);
      expect(seqs.length).toBeGreaterThanOrEqual(3);
      expect(seqs).toEqual(seqs.map((_, i) => i));
    }
  });

  it('reports the requests queued in the engine because they do not fit', () => {
    const options = parseWorkerFlags([
      ...['--namespace', 'test', '--worker-id', 'w-q', '--kv-total-blocks', '100'],
    ]);
    const small = new SimEngine(options);
    const reporter = new KvMetricsReporter(small, publisher, new WorkerConfig(options));
    try {
      reporter.start('http://127.0.0.1:9003');
      // Each worst case is 63 of the rank's 100 blocks: one runs, two wait.
      for (let i = 0; i < 3; i += 1) small.submit({ promptTokens: 500, maxTokens: 500 }, noop);
      jest.advanceTimersByTime(REPORT_DEBOUNCE_MS);
      const last = publisher
        .reports()
        .filter((r) => r.worker_id === 'w-q')
        .at(-1);
      expect(last?.num_requests_waiting).toBe(2);
    } finally {
      reporter.stop();
      small.close();
    }
  });

  it('publishes worker_down on stop and leaves no timer behind', () => {
    sut.start('http://127.0.0.1:9001');
    engine.submit({ promptTokens: 100, maxTokens: 10 }, noop);
    engine.close();
    sut.stop();
    expect(publisher.sent.at(-1)).toEqual({
      subject: 'namespace.test.worker_down',
      payload: { worker_id: 'w-1' },
    });
    expect(jest.getTimerCount()).toBe(0);
  });

  it('announces nothing on stop when it never started', () => {
    sut.stop();
    expect(publisher.sent).toEqual([]);
  });

  it('keeps running when the bus throws', () => {
    const failing = new RecordingPublisher();
    jest.spyOn(failing, 'publish').mockImplementation(() => {
      throw new Error('connection draining');
    });
    const options = parseWorkerFlags(['--worker-id', 'w-2']);
    const reporter = new KvMetricsReporter(engine, failing, new WorkerConfig(options));
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    expect(() => reporter.start('http://127.0.0.1:9002')).not.toThrow();
    expect(() => jest.advanceTimersByTime(3000)).not.toThrow();
    reporter.stop();
    expect(warn).toHaveBeenCalledTimes(1); // one line per streak of failures, not per report
    warn.mockRestore();
  });
});
