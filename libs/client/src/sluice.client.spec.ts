import { MockAgent } from 'undici';
import { RetryOptions } from './client.options';
import { SluiceConnectionError, SluiceHttpError, SluiceOverloadedError } from './client.errors';
import { RetryBudget } from './retry.budget';
import { SluiceClient } from './sluice.client';

const ORIGIN = 'http://sluice.test';
const NOW = Date.parse('2025-06-01T12:00:00Z');
const OVERLOAD =
  '{"message":"Service temporarily unavailable: All workers are busy, please retry later","type":"service_unavailable","code":503}';
const COMPLETION = { id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [] };
const JSON_HEADERS = { 'content-type': 'application/json' };

type Reply = { status: number; body?: string; headers?: Record<string, string> } | Error;
const overloaded = (retryAfter = '1'): Reply => ({
  status: 503,
  body: OVERLOAD,
  headers: { 'retry-after': retryAfter },
});
const ok: Reply = { status: 200, body: JSON.stringify(COMPLETION) };

/** A mocked frontend answering from `script` in order (the last reply repeats). */
function setup(script: Reply[], retry: RetryOptions = {}, random = () => 0.5) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const sleeps: number[] = [];
  let requests = 0;
  agent
    .get(ORIGIN)
    .intercept({ path: () => true, method: () => true })
    .reply(() => {
      const next = script.length > 1 ? script.shift()! : script[0];
      requests++;
      if (next instanceof Error) throw next;
      const headers = { ...JSON_HEADERS, ...next.headers };
      return { statusCode: next.status, data: next.body ?? '', responseOptions: { headers } };
    })
    .persist();
  const sut = new SluiceClient({
    baseUrl: ORIGIN,
    dispatcher: agent,
    retry,
    random,
    now: () => NOW,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
  });
  return { sut, sleeps, requests: () => requests };
}

const ask = (sut: SluiceClient) =>
  sut.chatCompletions({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });

describe('SluiceClient retries', () => {
  it('returns the completion after overloads, waiting at least Retry-After each time', async () => {
    const { sut, sleeps, requests } = setup([overloaded(), overloaded(), ok]);
    await expect(ask(sut)).resolves.toEqual(COMPLETION);
    expect(requests()).toBe(3);
    // base 500, random 0.5: jitter 250 then 500, both under the 1 s floor.
    expect(sleeps).toEqual([1000, 1000]);
  });

  it('uses the jittered backoff when it is longer than Retry-After', async () => {
    const retry = { baseDelayMs: 1000, maxDelayMs: 3000 };
    const { sut, sleeps } = setup([overloaded('1')], retry, () => 0.9);
    await expect(ask(sut)).rejects.toBeInstanceOf(SluiceOverloadedError);
    // 0.9 × min(3000, 1000·2^n) = 900 → floor 1000, 1800, 2700
    expect(sleeps).toEqual([1000, 1800, 2700]);
  });

  it('honours a Retry-After HTTP date', async () => {
    const { sut, sleeps } = setup([overloaded('Sun, 01 Jun 2025 12:00:05 GMT'), ok]);
    await ask(sut);
    expect(sleeps).toEqual([5000]);
  });

  it('makes maxAttempts requests, then throws SluiceOverloadedError', async () => {
    const { sut, requests, sleeps } = setup([overloaded('2')]);
    const err = await ask(sut).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SluiceOverloadedError);
    expect(err).toMatchObject({
      status: 503,
      retryAfter: 2,
      attempts: 4,
      budgetExhausted: false,
      type: 'service_unavailable',
      message: 'Service temporarily unavailable: All workers are busy, please retry later',
    });
    expect(requests()).toBe(4);
    expect(sleeps).toHaveLength(3);
  });

  it('takes maxAttempts per call, 1 meaning no retry', async () => {
    const { sut, requests } = setup([overloaded()]);
    const call = { maxAttempts: 1 };
    await expect(sut.models(call)).rejects.toMatchObject({ attempts: 1 });
    expect(requests()).toBe(1);
    expect(() => new SluiceClient({ baseUrl: ORIGIN, retry: { maxAttempts: 0 } })).toThrow(
      RangeError,
    );
  });

  it('does not wait for a Retry-After longer than maxRetryAfterMs', async () => {
    const { sut, requests } = setup([overloaded('3600')]);
    await expect(ask(sut)).rejects.toMatchObject({ retryAfter: 3600, attempts: 1 });
    expect(requests()).toBe(1);
  });

  it.each([400, 404, 429, 500, 502, 504])('does not retry %i', async (status) => {
    const body = `{"message":"no","type":"t${status}","code":${status}}`;
    const { sut, requests, sleeps } = setup([{ status, body }]);
    const err = await ask(sut).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SluiceHttpError);
    expect(err).not.toBeInstanceOf(SluiceOverloadedError);
    expect(err).toMatchObject({ status, type: `t${status}`, message: 'no', attempts: 1 });
    expect(requests()).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it('retries 502 and a refused connection only when asked to', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const off = setup([refused, ok]);
    await expect(ask(off.sut)).rejects.toBeInstanceOf(SluiceConnectionError);
    const on = setup([refused, { status: 502, body: '{}' }, ok], {
      retryConnectionRefused: true,
      retryBadGateway: true,
    });
    await expect(ask(on.sut)).resolves.toEqual(COMPLETION);
    expect(on.requests()).toBe(3);
  });
});

describe('SluiceClient retry budget', () => {
  it('stops retrying when the shared budget is empty and hands back the 503', async () => {
    const budget = new RetryBudget({ maxTokens: 2 });
    const { sut, requests } = setup([overloaded()], { budget });
    await expect(ask(sut)).rejects.toMatchObject({ attempts: 3, budgetExhausted: true });
    // the next call of the same client is not retried at all
    await expect(ask(sut)).rejects.toMatchObject({ attempts: 1, budgetExhausted: true });
    expect(requests()).toBe(4);
  });

  it('refills on successes: ten at 0.1 buy one retry', async () => {
    const budget = new RetryBudget({ maxTokens: 1, depositPerSuccess: 0.1 });
    const { sut, requests } = setup([overloaded(), ok], { budget });
    await ask(sut); // 503, retry (token spent), 200 (+0.1)
    expect(budget.available).toBeCloseTo(0.1);
    const busy = setup([overloaded()], { budget });
    await expect(ask(busy.sut)).rejects.toMatchObject({ attempts: 1 });
    const fine = setup([ok], { budget });
    for (let i = 0; i < 9; i++) await ask(fine.sut);
    expect(budget.available).toBe(1);
    await expect(ask(busy.sut)).rejects.toMatchObject({ attempts: 2, budgetExhausted: true });
    expect(requests() + busy.requests()).toBe(2 + 3);
  });

  it('can be turned off', async () => {
    const { sut, requests } = setup([overloaded()], { budget: false, maxAttempts: 20 });
    await expect(ask(sut)).rejects.toMatchObject({ attempts: 20 });
    expect(requests()).toBe(20);
  });
});
