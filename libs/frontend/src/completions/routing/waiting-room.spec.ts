import { Logger } from '@nestjs/common';
import { ServiceOverloadedError } from '../../admission/errors/service-overloaded.error';
import { OBJECTIVE_MISSED } from '../../admission/refusal';
import { FrontendConfig } from '../../config/frontend-config';
import { PriorityClass } from '../../config/priority';
import { RequestMetricsService } from '../../request-metrics/request-metrics.service';
import { ModelEntry } from '../../worker-monitor/worker-entry';
import { WorkerRegistry } from '../../worker-monitor/worker-registry.service';
import { Ask } from './ask';
import { Waiter } from './router-queue';
import { WaitingRoom, WaitingRoomHost } from './waiting-room';

interface Served {
  readonly by: number;
}

describe('WaitingRoom', () => {
  const model = { name: 'm' } as ModelEntry;
  const registry = { model: (name: string) => (name === 'm' ? model : undefined) };
  let queued: { inc: jest.Mock; dec: jest.Mock };
  /** What `serve` answers; it records whom it was asked about. */
  let decide: (c: PriorityClass, w: Waiter<Served>) => Served | 'wait' | 'late';
  let answers: Record<PriorityClass, Served | 'wait' | 'late'>;
  let asked: number[];
  let late: (now: number, deadlineMs: number) => number;
  let sut: WaitingRoom<Served>;
  const signal = new AbortController().signal;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    jest.useFakeTimers();
    queued = { inc: jest.fn(), dec: jest.fn() };
    answers = { critical: 'wait', standard: 'wait', sheddable: 'wait' };
    decide = (c) => answers[c];
    asked = [];
    late = () => -Infinity;
    const host: WaitingRoomHost<Served> = {
      serve: (_m, c, w: Waiter<Served>) => {
        asked.push(w.promptTokens);
        return decide(c, w);
      },
      lateBy: (_ask, deadlineMs, now) => late(now, deadlineMs),
    };
    const config = new FrontendConfig({
      routerQueueThreshold: 1,
      routerQueueMaxDepth: 3,
      routerQueueTimeoutMs: 5000,
    });
    const metrics = { queued } as unknown as RequestMetricsService;
    sut = new WaitingRoom(config, registry as unknown as WorkerRegistry, metrics, host);
  });
  afterEach(() => {
    jest.clearAllTimers();
    jest.useRealTimers();
  });

  const ask = (promptTokens: number, priority: PriorityClass = 'standard'): Ask => ({
    model,
    promptTokens,
    maxTokens: 0,
    priority,
    endpoint: 'chat_completions',
  });
  /** Queues a request; its outcome: 'waiting', what it was served, or its error's message. */
  const wait = (
    tokens: number,
    c: PriorityClass = 'standard',
    deadlineMs: number | null = null,
  ) => {
    const outcome: { value: unknown; refusal?: unknown } = { value: 'waiting' };
    sut.enqueue(ask(tokens, c), signal, deadlineMs).then(
      (served) => (outcome.value = served),
      (err: Error) => {
        outcome.value = err.message;
        if (err instanceof ServiceOverloadedError) outcome.refusal = err.refusal;
      },
    );
    return outcome;
  };
  const settle = () => jest.advanceTimersByTimeAsync(0);

  it('never queues a request whose client has already gone', async () => {
    const gone = new AbortController();
    gone.abort();
    await expect(sut.enqueue(ask(1), gone.signal, null)).rejects.toThrow('client went away');
    answers = { critical: { by: 1 }, standard: { by: 1 }, sheddable: { by: 1 } };
    sut.drain('m');
    expect([sut.has('m'), asked, queued.inc.mock.calls.length]).toEqual([false, [], 0]);
  });

  it('holds requests, counted in the queued gauge, until drained; serves each class in order', async () => {
    const shed = wait(1, 'sheddable');
    const std = wait(2, 'standard');
    const crit = wait(3, 'critical');
    expect([sut.has('m'), sut.aheadOf('m', 'critical'), sut.aheadOf('m', 'sheddable')]).toEqual([
      true,
      1,
      3,
    ]);
    expect(queued.inc).toHaveBeenCalledTimes(3);
    answers = { critical: { by: 1 }, standard: { by: 2 }, sheddable: { by: 3 } };
    sut.drain('m');
    await settle();
    expect(asked).toEqual([3, 2, 1]);
    expect([crit.value, std.value, shed.value]).toEqual([{ by: 1 }, { by: 2 }, { by: 3 }]);
    expect([sut.has('m'), queued.dec.mock.calls.length]).toEqual([false, 3]);
  });

  it('keeps a head that must wait, and its class behind it; other classes are still served', async () => {
    const a = wait(1);
    const b = wait(2);
    const shed = wait(3, 'sheddable');
    answers.sheddable = { by: 9 };
    sut.drain('m');
    await settle();
    expect(asked).toEqual([1, 3]); // standard's head waits: b is not asked
    expect([a.value, b.value, shed.value]).toEqual(['waiting', 'waiting', { by: 9 }]);
  });

  it('serves each head once when serving it asks for another drain', async () => {
    const first = wait(1);
    const second = wait(2);
    const third = wait(3);
    let served = 0;
    // Leasing a worker can free another one, which asks for a drain from inside this one.
    decide = () => {
      served++;
      if (served === 1) sut.drain('m');
      return served <= 2 ? { by: served } : 'wait';
    };
    sut.drain('m');
    await settle();
    expect([first.value, second.value, third.value]).toEqual([{ by: 1 }, { by: 2 }, 'waiting']);
    expect(asked).toEqual([1, 2, 3, 3]); // the nested drain ran after the first head was served
    expect([sut.aheadOf('m', 'standard'), queued.dec.mock.calls.length]).toEqual([1, 2]);
  });

  it('refuses a head that can no longer make its deadline, then serves the next', async () => {
    const first = wait(1, 'standard', 100);
    const second = wait(2, 'standard', 200);
    decide = (_c, w) => (w.deadlineMs === 100 ? 'late' : { by: 2 });
    sut.drain('m');
    await settle();
    expect([first.refusal, second.value]).toEqual([OBJECTIVE_MISSED, { by: 2 }]);
    expect(queued.dec).toHaveBeenCalledTimes(2);
  });

  it('refuses a waiter by its own timer once its deadline can no longer be met, unserved', async () => {
    // Predicted 20 ms wherever it goes: due at 100, too late from 80 on.
    late = (now, deadlineMs) => now + 20 - deadlineMs;
    const due = wait(1, 'standard', performance.now() + 100);
    const plain = wait(2);
    await jest.advanceTimersByTimeAsync(79);
    expect(due.value).toBe('waiting');
    await jest.advanceTimersByTimeAsync(21);
    expect([due.refusal, plain.value, asked]).toEqual([OBJECTIVE_MISSED, 'waiting', []]);
    expect(sut.aheadOf('m', 'standard')).toBe(1);
  });

  it('refuses a waiter after --router-queue-timeout-ms', async () => {
    const w = wait(1);
    await jest.advanceTimersByTimeAsync(4999);
    expect(w.value).toBe('waiting');
    await jest.advanceTimersByTimeAsync(1);
    expect(w.value).toMatch(/timed out waiting in the router queue/);
    expect([sut.has('m'), queued.dec.mock.calls.length]).toEqual([false, 1]);
  });

  it('lets a waiter whose client went away leave the queue', async () => {
    const controller = new AbortController();
    const outcome: { value: unknown } = { value: 'waiting' };
    sut
      .enqueue(ask(1), controller.signal, null)
      .catch((err: Error) => (outcome.value = err.message));
    controller.abort();
    await settle();
    expect(outcome.value).toMatch(/client went away/);
    expect(sut.has('m')).toBe(false);
  });

  it('makes room in a full queue by refusing the newest lower waiter, else refuses the newcomer', async () => {
    const oldShed = wait(1, 'sheddable');
    const newShed = wait(2, 'sheddable');
    wait(3, 'standard');
    wait(4, 'critical'); // full (depth 3): the newest sheddable goes
    await settle();
    expect([oldShed.value, newShed.value]).toEqual([
      'waiting',
      expect.stringMatching(/queue is full/),
    ]);
    expect(() => sut.enqueue(ask(5, 'sheddable'), signal, null)).toThrow(/router queue is full/);
    wait(6, 'standard'); // the other sheddable goes
    await settle();
    expect(oldShed.value).toMatch(/router queue is full/);
    expect(() => sut.enqueue(ask(7, 'standard'), signal, null)).toThrow(ServiceOverloadedError);
  });
});
